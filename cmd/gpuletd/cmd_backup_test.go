package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// The backup call carries the admin token, which a daemon off loopback
// asks for, and a refusal reaches the operator with the daemon's words.
func TestFetchBackupSendsTheToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/backup" || r.Header.Get("Authorization") != "Bearer t0k" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error": "send Authorization: Bearer <auth.admin_token>"}`))
			return
		}
		_, _ = w.Write([]byte("SQLite format 3\x00"))
	}))
	defer srv.Close()
	d := plainAPI(srv.URL)

	got, err := fetchBackup(context.Background(), d, "t0k")
	require.NoError(t, err)
	require.Equal(t, "SQLite format 3\x00", string(got))

	_, err = fetchBackup(context.Background(), d, "")
	err = daemonError(d.base, err)
	require.EqualError(t, err, "gpuletd: the daemon at "+srv.URL+" answered 401 Unauthorized: send Authorization: Bearer <auth.admin_token>")
}
