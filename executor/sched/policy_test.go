package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in   string
		want Policy
		name string
	}{
		{"", Deferred{}, "deferred"},
		{"deferred", Deferred{}, "deferred"},
		{"deferred:solo", Deferred{Solo: true}, "deferred:solo"},
		{"deferred:headonly", Deferred{HeadOnly: true}, "deferred:headonly"},
		{"deferred:headonly,solo", Deferred{Solo: true, HeadOnly: true}, "deferred:solo,headonly"},
		{" eager ", Eager{}, "eager"},
		{"timeout:2ms", Timeout{K: 2 * time.Millisecond}, "timeout:2ms"},
		{"timeout:0", Timeout{}, "timeout:0s"},
		{"timeout:1.5ms", Timeout{K: 1500 * time.Microsecond}, "timeout:1.5ms"},
		{"flex", Flex{Preempt: true}, "flex"},
		{"flex:preempt", Flex{Preempt: true}, "flex"},
		{"flex:nopreempt", Flex{}, "flex:nopreempt"},
		{"flex:lambda=4", Flex{Preempt: true, Lambda: 4}, "flex:lambda=4"},
		{"flex:lambda=3.03", Flex{Preempt: true, Lambda: 3.03}, "flex"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			p, err := ParsePolicy(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, p)
			require.Equal(t, tc.name, p.String())
			back, err := ParsePolicy(p.String())
			require.NoError(t, err)
			require.Equal(t, p.String(), back.String())
		})
	}
}

func TestParsePolicyErrors(t *testing.T) {
	for _, in := range []string{
		"fifo", "Deferred", "deferred:1", "deferred:", "deferred:solo,", "deferred:solo;headonly", "eager:x", "timeout", "timeout:", "timeout:abc",
		"timeout:-1ms", "flex:lambda=1", "flex:lambda=0.5", "flex:lambda=x", "flex:lambda=NaN",
		"flex:lambda=+Inf", "flex:other",
	} {
		t.Run(in, func(t *testing.T) {
			_, err := ParsePolicy(in)
			require.ErrorIs(t, err, ErrBadPolicy)
		})
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"deferred", "deferred:solo,headonly", "eager", "timeout:2ms", "flex", "flex:nopreempt", "flex:lambda=4", "timeout:-3s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err != nil {
			require.ErrorIs(t, err, ErrBadPolicy)
			return
		}
		require.NoError(t, validate(p))
		back, err := ParsePolicy(p.String())
		require.NoError(t, err, "name %q of %q", p.String(), s)
		require.Equal(t, p.spec(), back.spec())
	})
}
