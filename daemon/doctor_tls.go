package daemon

import (
	"fmt"
	"net"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
)

// TLSReport is the listeners' certificate as serve would load it.
type TLSReport struct {
	CertFile string    `json:"cert_file"`
	Subject  string    `json:"subject,omitempty"`
	NotAfter time.Time `json:"not_after,omitzero"`
	// Error says why serve would not start with it; Warning what clients
	// would refuse (an expired or soon expiring certificate, one not
	// valid for the listen address).
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// soonExpiring is how close to its end a certificate is warned about.
const soonExpiring = 14 * 24 * time.Hour

// tlsReport loads the configured certificate as serve would; nil without
// TLS.
func tlsReport(cfg config.Config, now time.Time) *TLSReport {
	if !cfg.TLS.Enabled() {
		return nil
	}
	r := &TLSReport{CertFile: cfg.TLS.CertFile}
	cert, err := newServerCert(cfg.TLS)
	if err != nil {
		r.Error = err.Error()
		r.Fix = "give tls.cert_file and tls.key_file readable by the user gpuletd runs as, the key the certificate's"
		return r
	}
	leaf := cert.leaf()
	r.Subject, r.NotAfter = leaf.Subject.String(), leaf.NotAfter
	host, _, _ := net.SplitHostPort(cfg.Listen)
	switch {
	case now.After(leaf.NotAfter):
		r.Warning = fmt.Sprintf("expired %s ago: clients refuse it", now.Sub(leaf.NotAfter).Round(time.Hour))
		r.Fix = "renew it, then systemctl reload gpuletd"
	case leaf.NotAfter.Sub(now) < soonExpiring:
		r.Warning = fmt.Sprintf("expires in %s", leaf.NotAfter.Sub(now).Round(time.Hour))
		r.Fix = "renew it, then systemctl reload gpuletd"
	case host != "" && !net.ParseIP(host).IsUnspecified() && leaf.VerifyHostname(host) != nil:
		r.Warning = fmt.Sprintf("not valid for %s, the listen address: clients that connect by it refuse it", host)
		r.Fix = "have it name that address (or connect by a name it has)"
	}
	return r
}
