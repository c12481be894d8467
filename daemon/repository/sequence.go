package repository

import (
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// Sequence is a stateful model's sequence batching (a config.pbtxt's
// sequence_batching): the requests of one sequence, named by the request's
// sequence_id, run one after the other; the daemon gives the model's
// control inputs their values (a sequence's start, its end, that a row is
// ready, its correlation ID) and carries each state output of a request
// into the same-named state input of the sequence's next request. The
// requests of different sequences batch together like any others.
type Sequence struct {
	// Idle is how long a sequence may go without a request before it is
	// ended (max_sequence_idle_microseconds; Triton's default is 1 s).
	Idle time.Duration
	// MaxSequences bounds the sequences the model keeps at once
	// (oldest.max_candidate_sequences, else DefaultMaxSequences, or fewer
	// where their states would hold more than MaxStateBytes): a sequence
	// started beyond it is refused.
	MaxSequences int
	Controls     []SequenceControl
	States       []SequenceState
	// maxSet: the configuration gave MaxSequences.
	maxSet bool
}

// MaxStateBytes bounds the state a model's live sequences may hold in the
// daemon's memory together.
const MaxStateBytes = 1 << 30

// StateBytes is the state one sequence holds: every state's bytes.
func (s *Sequence) StateBytes() int64 {
	var n int64
	for _, st := range s.States {
		e, _ := tensor.NumElements(st.Dims)
		n += e * int64(st.DataType.Size())
	}
	return n
}

// DefaultIdle is a sequence's idle time when the configuration gives none,
// as in Triton.
const DefaultIdle = time.Second

// DefaultMaxSequences bounds a model's live sequences when the
// configuration does not: each holds its state tensors in the daemon.
const DefaultMaxSequences = 4096

// ControlKind is what a control input tells the model.
type ControlKind int

// The control kinds of Triton's sequence batcher.
const (
	ControlStart  ControlKind = iota // the sequence's first request
	ControlReady                     // the row holds a request (always true here)
	ControlEnd                       // the sequence's last request
	ControlCorrID                    // the sequence's correlation ID
)

// String names the kind as a config.pbtxt does.
func (k ControlKind) String() string {
	return [...]string{"CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END", "CONTROL_SEQUENCE_CORRID"}[k]
}

// Purpose says what the kind tells the model, in a word or two: "start".
func (k ControlKind) Purpose() string {
	return [...]string{"start", "ready", "end", "correlation ID"}[k]
}

// SequenceControl is one control input: a tensor of one element per row.
type SequenceControl struct {
	Input    string
	Kind     ControlKind
	DataType tensor.DataType
	// False and True are the values of a start, ready or end control.
	False, True float64
}

// SequenceState is one state carried from a request to the next of its
// sequence: the model's Output written into its Input.
type SequenceState struct {
	Input, Output string
	DataType      tensor.DataType
	// Dims is the state's shape without the batch dimension.
	Dims []int64
	// InitialFile names the file in the model folder's initial_state
	// folder the first request's state is read from; "" for zeros.
	InitialFile string
	// Initial is that file's bytes (nil: zeros), read with the model.
	Initial []byte
}

// Sequence roles of a model's tensors (TensorSpec.Sequence): the daemon
// fills these, so requests do not send them and answers do not carry them.
const (
	RoleControl = "control"
	RoleState   = "state"
)

// Role is the sequence role of the model's input or output name: RoleControl,
// RoleState or "" for a tensor of the requests.
func (s *Sequence) Role(name string, input bool) string {
	if s == nil {
		return ""
	}
	for _, c := range s.Controls {
		if input && c.Input == name {
			return RoleControl
		}
	}
	for _, st := range s.States {
		if (input && st.Input == name) || (!input && st.Output == name) {
			return RoleState
		}
	}
	return ""
}

// RequestTensors are the specs a request gives or is answered with: specs
// less those the daemon fills for a sequence. specs itself when none is.
func RequestTensors(specs []TensorSpec) []TensorSpec {
	n := 0
	for _, s := range specs {
		if s.Sequence == "" {
			n++
		}
	}
	if n == len(specs) {
		return specs
	}
	out := make([]TensorSpec, 0, n)
	for _, s := range specs {
		if s.Sequence == "" {
			out = append(out, s)
		}
	}
	return out
}
