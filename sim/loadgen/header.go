package loadgen

import (
	"context"
	"net/http"
	"strings"
)

// WithHeader is c with header set on every request it sends (none: c as
// it is).
func WithHeader(c *http.Client, header map[string]string) *http.Client {
	if len(header) == 0 {
		return c
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out := *c
	out.Transport = HeaderTransport{Base: base, Header: header}
	return &out
}

// HeaderTransport sets its headers on every request it sends through Base
// (WithHeader).
type HeaderTransport struct {
	Base   http.RoundTripper
	Header map[string]string
}

// RoundTrip sends a copy of r with the headers set.
func (t HeaderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context()) // a RoundTripper leaves the caller's request as it was
	for k, v := range t.Header {
		r.Header.Set(k, v)
	}
	return t.Base.RoundTrip(r)
}

// CloseIdleConnections closes the connections the transport under it
// keeps, as http.Client.CloseIdleConnections asks of a transport.
func (t HeaderTransport) CloseIdleConnections() {
	if c, ok := t.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// metadataCreds sends its headers as every gRPC call's metadata, over
// plain connections too.
type metadataCreds map[string]string

// GetRequestMetadata gives the headers, their names lowercase as gRPC's
// metadata has them.
func (m metadataCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out, nil
}

// RequireTransportSecurity is false: the headers go over plain gRPC too.
func (metadataCreds) RequireTransportSecurity() bool { return false }
