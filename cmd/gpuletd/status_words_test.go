package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A share is never written above what it is: a load sweep's step that
// missed its 99% by a little, or a model one miss short of all its
// requests, must not read 99.0% or 100.0%.
func TestPercentRoundsDown(t *testing.T) {
	for _, tc := range []struct {
		share float64
		want  string
	}{
		{0.9896, "98.9%"},
		{0.99, "99.0%"},
		{0.99996, "99.9%"},
		{1, "100.0%"},
		{0.29, "29.0%"},
		{0.057, "5.7%"},
		{0, "0.0%"},
	} {
		require.Equal(t, tc.want, percent(tc.share), "%v", tc.share)
	}
}
