package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestEchoAnswersTheSameBytes(t *testing.T) {
	body := []byte(`{"model_name":"m","outputs":[{"name":"y","shape":[1,2],"datatype":"FP32","data":[0,0]}]}`)
	srv := httptest.NewServer(&Echo{Body: body, Header: http.Header{"Content-Type": {"application/json"}}})
	defer srv.Close()
	p := &Payload{Body: make([]byte, 5000), JSONLen: -1}
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 200 * time.Millisecond, Payload: p, SLO: time.Second})
	require.NoError(t, err)
	require.Positive(t, rep.Sent)
	require.Equal(t, rep.Sent, rep.OK)
	require.Equal(t, float64(len(body)), rep.ResponseBytes)
}
