package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// auth.restricted_apis reads Triton's form; what does not read is refused
// naming the entry without its value, and a group restricted twice too.
func TestRestrictedAPIs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries string
		want    map[string]Restriction
		err     []string
	}{
		{"none", `[]`, map[string]Restriction{}, nil},
		{"two groups, two headers", `["model-repository, trace:admin-key=s3cret", "inference:x-infer-key=a=b"]`,
			map[string]Restriction{"model-repository": {"admin-key", "s3cret"}, "trace": {"admin-key", "s3cret"}, "inference": {"x-infer-key", "a=b"}}, nil},
		{"an empty value", `["health:probe="]`, map[string]Restriction{"health": {"probe", ""}}, nil},
		{"no header", `["inference"]`, nil, []string{`auth.restricted_apis[0]: "inference" is not allowed`, `give "api[,api...]:header=value"`}},
		{"no value", `["inference:admin-key"]`, nil, []string{`auth.restricted_apis[0]: "inference:admin-key"`}},
		{"an unknown group", `["infer:k=s3cret"]`, nil, []string{`auth.restricted_apis[0]: "infer:k=<redacted>" is not allowed; api "infer": the apis are health, metadata`}},
		{"a header that is not one", `["inference:admin key=s3cret"]`, nil, []string{`header "admin key": give a header name`}},
		{"gRPC's own", `["inference:grpc-timeout=s3cret"]`, nil, []string{`header "grpc-timeout"`}},
		{"one header, two values", `["trace:a=1", "logging:A=2"]`, nil, []string{`auth.restricted_apis[1]: "logging:A=<redacted>" is not allowed; header "A" has another value in auth.restricted_apis[0]`}},
		{"one header, one value", `["trace:a=1", "logging:a=1"]`, map[string]Restriction{"trace": {"a", "1"}, "logging": {"a", "1"}}, nil},
		{"twice", `["trace,logging:a=1", "logging:b=2"]`, nil, []string{`auth.restricted_apis[1]: "logging:b=<redacted>" is not allowed; api "logging" is restricted by auth.restricted_apis[0] already`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gpuletd.yaml")
			require.NoError(t, os.WriteFile(path, []byte("auth:\n  restricted_apis: "+tc.entries+"\n"), 0o600))
			l, err := Load(path, nil)
			if tc.err != nil {
				require.ErrorIs(t, err, ErrInvalid)
				for _, e := range tc.err {
					require.ErrorContains(t, err, e)
				}
				require.NotContains(t, err.Error(), "s3cret", "the value is not said")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, l.Config.Auth.Restrictions())
		})
	}
}

// The configuration is shown with the values hidden.
func TestRestrictedAPIValuesAreRedacted(t *testing.T) {
	l, err := Load("", []string{`GPULETD_AUTH_RESTRICTED_APIS=["inference,health:x-key=s3cret"]`})
	require.NoError(t, err)
	require.Equal(t, map[string]Restriction{"inference": {"x-key", "s3cret"}, "health": {"x-key", "s3cret"}}, l.Config.Auth.Restrictions())
	require.Equal(t, map[string]string{"x-key": "s3cret"}, l.Config.Auth.RestrictionHeaders())
	y, err := l.YAML()
	require.NoError(t, err)
	require.Contains(t, string(y), `restricted_apis: ['inference,health:x-key=<redacted>']`)
	require.NotContains(t, string(y), "s3cret")
}
