package daemon

import (
	"net/http"

	"github.com/gorilla/mux"
)

func newRouter() http.Handler {
	r := mux.NewRouter()
	r.HandleFunc("/v2/health/live", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}).Methods(http.MethodGet)
	return r
}
