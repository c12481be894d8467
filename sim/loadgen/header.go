package loadgen

import (
	"context"
	"net/http"
	"strings"
)

// WithHeader is c with header set on every request it sends (none: c as
// it is), in place of the headers c set already (a client WithHeader
// made).
func WithHeader(c *http.Client, header map[string]string) *http.Client {
	t, wrapped := c.Transport.(headerTransport)
	if len(header) == 0 && !wrapped {
		return c
	}
	out := *c
	out.Transport = c.Transport
	if wrapped {
		out.Transport = t.base
	}
	if len(header) > 0 {
		if out.Transport == nil {
			out.Transport = http.DefaultTransport
		}
		out.Transport = headerTransport{base: out.Transport, header: header}
	}
	return &out
}

// headerTransport sets its headers on every request it sends through base
// (WithHeader).
type headerTransport struct {
	base   http.RoundTripper
	header map[string]string
}

// RoundTrip sends a copy of r with the headers set.
func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context()) // a RoundTripper leaves the caller's request as it was
	for k, v := range t.header {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections closes the connections the transport under it
// keeps, as http.Client.CloseIdleConnections asks of a transport.
func (t headerTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
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
