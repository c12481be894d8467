package kserve

import (
	"fmt"
	"strings"
)

// ParamEnableEmptyFinal is the one request parameter of Triton's own (its
// keys start with "triton_") a request may give: it asks for an empty last
// answer from a decoupled model. gpuletd serves no decoupled models, so it
// changes nothing here; it is checked to be a boolean, as Triton checks it.
const ParamEnableEmptyFinal = "triton_enable_empty_final_response"

// reservedPrefix starts the request parameters Triton keeps for itself.
const reservedPrefix = "triton_"

// checkReservedKeys refuses a request whose parameters name one of Triton's
// own other than ParamEnableEmptyFinal, as Triton refuses it: such a key is
// a setting of the server's, not something to pass on. The first such key
// in order is named.
func checkReservedKeys[V any](p map[string]V) error {
	bad := ""
	for key := range p {
		if strings.HasPrefix(key, reservedPrefix) && key != ParamEnableEmptyFinal && (bad == "" || key < bad) {
			bad = key
		}
	}
	if bad != "" {
		return fmt.Errorf("%w: parameters: %q: keys starting with %q are Triton's own; the one a request may give is %s",
			ErrBadRequest, bad, reservedPrefix, ParamEnableEmptyFinal)
	}
	return nil
}
