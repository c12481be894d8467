package daemon

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
)

// admission holds the models the plan in force holds back at overload to
// their share (control.Admission), for the daemon's concurrent handlers.
type admission struct {
	mu sync.Mutex
	a  *control.Admission
}

// setAdmission follows a new plan.
func (n *node) setAdmission(plan *gpulet.Plan) {
	n.admission.mu.Lock()
	defer n.admission.mu.Unlock()
	n.admission.a = control.NewAdmission(plan, n.admission.a)
}

// overShare refuses a request of model beyond its share of an overloaded
// node (nil: admitted).
func (n *node) overShare(model string) *inferError {
	n.admission.mu.Lock()
	ok := n.admission.a.Admit(model, n.router.now())
	rate := n.admission.a.Limited(model)
	n.admission.mu.Unlock()
	if ok {
		return nil
	}
	return &inferError{code: http.StatusServiceUnavailable, reason: reasonOverShare,
		msg: fmt.Sprintf("%s: the node is overloaded and this model asks more than its share (%.1f req/s); the excess is refused so that other models keep theirs, retry later", model, rate)}
}
