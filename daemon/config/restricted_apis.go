package config

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// RestrictableAPIs are the groups of the inference APIs that
// auth.restricted_apis may restrict, by Triton's names for them.
var RestrictableAPIs = []string{"health", "metadata", "inference", "shared-memory", "model-config", "model-repository", "statistics", "trace", "logging"}

// Restriction is what a restricted group of APIs asks of a request: the
// header (gRPC metadata) Header carrying Value.
type Restriction struct {
	Header, Value string
}

// Restrictions reads auth.restricted_apis: the restriction of each group
// restricted. Validate has refused entries that do not read.
func (a Auth) Restrictions() map[string]Restriction {
	out := map[string]Restriction{}
	for _, e := range a.RestrictedAPIs {
		apis, r, err := parseRestriction(e)
		if err != nil {
			continue
		}
		for _, api := range apis {
			out[api] = r
		}
	}
	return out
}

// RestrictionHeaders are the headers, with their values, that let a
// request through every restriction: what gpuletd's own clients (its
// commands, the doctor's probes, the watchdog) send. Validate has refused
// a header given two values.
func (a Auth) RestrictionHeaders() map[string]string {
	out := map[string]string{}
	for _, r := range a.Restrictions() {
		out[r.Header] = r.Value
	}
	return out
}

// restrictedUsage says how an entry of auth.restricted_apis is written.
const restrictedUsage = `give "api[,api...]:header=value", such as "model-repository,trace,logging:admin-key=<value>"; the apis are `

// parseRestriction reads one entry of auth.restricted_apis.
func parseRestriction(e string) ([]string, Restriction, error) {
	list, kv, ok := strings.Cut(e, ":")
	header, value, hasValue := strings.Cut(kv, "=")
	header = strings.TrimSpace(header)
	if !ok || !hasValue || header == "" {
		return nil, Restriction{}, fmt.Errorf("%s%s", restrictedUsage, strings.Join(RestrictableAPIs, ", "))
	}
	if !httpguts.ValidHeaderFieldName(header) || strings.HasPrefix(strings.ToLower(header), "grpc-") {
		return nil, Restriction{}, fmt.Errorf("header %q: give a header name of letters, digits and -, not one of gRPC's own (grpc-...)", header)
	}
	var apis []string
	for _, api := range strings.Split(list, ",") {
		api = strings.TrimSpace(api)
		if !slices.Contains(RestrictableAPIs, api) {
			return nil, Restriction{}, fmt.Errorf("api %q: the apis are %s", api, strings.Join(RestrictableAPIs, ", "))
		}
		apis = append(apis, api)
	}
	return apis, Restriction{Header: header, Value: value}, nil
}

// RedactRestriction is an entry of auth.restricted_apis with its value
// hidden, as the configuration is shown and its errors said.
func RedactRestriction(e string) string {
	list, kv, ok := strings.Cut(e, ":")
	if header, _, hasValue := strings.Cut(kv, "="); ok && hasValue {
		return list + ":" + header + "=<redacted>"
	}
	return e
}

// validateRestrictions reports each entry of auth.restricted_apis that does
// not read, and a group restricted by two entries (Triton refuses it too).
func validateRestrictions(entries []string, bad func(field, value, why string)) {
	type valueAt struct {
		value string
		at    int
	}
	seen := map[string]int{}
	headers := map[string]valueAt{}
	for i, e := range entries {
		field := fmt.Sprintf("auth.restricted_apis[%d]", i)
		apis, r, err := parseRestriction(e)
		if err != nil {
			bad(field, RedactRestriction(e), err.Error())
			continue
		}
		// One value per header, so that gpuletd's own clients can send
		// one set of headers that passes every group.
		key := strings.ToLower(r.Header)
		if h, ok := headers[key]; ok && h.value != r.Value {
			bad(field, RedactRestriction(e), fmt.Sprintf("header %q has another value in auth.restricted_apis[%d]: give a header one value, or use another header", r.Header, h.at))
		}
		headers[key] = valueAt{r.Value, i}
		for _, api := range apis {
			if j, twice := seen[api]; twice {
				bad(field, RedactRestriction(e), fmt.Sprintf("api %q is restricted by auth.restricted_apis[%d] already: give each api once", api, j))
			}
			seen[api] = i
		}
	}
}
