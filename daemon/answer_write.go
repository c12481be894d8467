package daemon

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gpulet/gpuletd/kserve"
)

// answerInMemory bounds the answers written whole, with their length (and
// compressed whole when the client accepts it, as encodeAnswer decides):
// a larger one is formatted and sent a slice at a time, so that an answer
// of millions of values never lies in memory as text (a JSON answer takes
// about three times its tensors' bytes).
const answerInMemory = 1 << 20

// formatAnswer formats resp whole when it is small enough to go whole
// (about answerInMemory at most), so that its time counts in the
// request's, as it did when every answer was formatted before it was
// sent; nil for a larger one, which is formatted as it is written.
func formatAnswer(resp *kserve.Response) []byte {
	if resp.Size() > answerInMemory {
		return nil
	}
	return resp.Bytes()
}

// writeAnswer writes resp, an inference answer (whole: formatAnswer's), as
// a 200 for a request that accepts the codings accept. A client that takes
// none of its bytes for stall (limits.body_timeout) loses the answer and
// its connection, so that clients that do not read cannot hold answers in
// the daemon's memory for as long as they keep their connections. It says
// whether the answer was sent whole.
func writeAnswer(w http.ResponseWriter, accept string, resp *kserve.Response, whole []byte, stall time.Duration) bool {
	h := w.Header()
	if resp.JSONLen >= 0 {
		h.Set(kserve.HeaderContentLength, strconv.FormatInt(resp.JSONLen, 10))
		h.Set("Content-Type", "application/octet-stream")
	} else {
		h.Set("Content-Type", "application/json")
	}
	h.Add("Vary", "Accept-Encoding")
	sw := &spillWriter{w: w, accept: accept, kept: whole, rc: http.NewResponseController(w), stall: stall}
	var err error
	if whole == nil {
		sw.kept = make([]byte, 0, answerInMemory) // it is larger (formatAnswer), or about as large
		_, err = resp.WriteTo(sw)
	}
	if err == nil {
		err = sw.finish()
	}
	if err == nil {
		// What net/http still buffers goes now, within the deadline.
		sw.deadline()
		err = sw.rc.Flush()
	}
	if stall > 0 {
		// The connection may serve the client's next request.
		_ = sw.rc.SetWriteDeadline(time.Time{})
	}
	return err == nil
}

// spillWriter keeps what is written to it until answerInMemory bytes, then
// sends the answer as it comes: its head without a length, the bytes kept,
// and the rest, compressed as the client accepts.
type spillWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	stall  time.Duration // each write's deadline from its start; 0: none
	accept string
	kept   []byte
	out    io.Writer      // set once the answer spilled
	closer io.WriteCloser // the compressor, when there is one
}

func (s *spillWriter) Write(p []byte) (int, error) {
	if s.out == nil && len(s.kept)+len(p) <= answerInMemory {
		s.kept = append(s.kept, p...)
		return len(p), nil
	}
	if s.out == nil {
		s.spill()
		if _, err := s.send(s.kept); err != nil {
			return 0, err
		}
		s.kept = nil
	}
	return s.send(p)
}

// send writes p on, within its deadline.
func (s *spillWriter) send(p []byte) (int, error) {
	s.deadline()
	return s.out.Write(p)
}

// deadline gives the next write stall to finish.
func (s *spillWriter) deadline() {
	if s.stall > 0 {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall))
	}
}

// spill begins the answer without its length.
func (s *spillWriter) spill() {
	s.out = s.w
	if coding := answerCoding(s.accept); s.accept != "" && coding != codingIdentity {
		s.w.Header().Set("Content-Encoding", coding)
		s.closer = kserve.NewCompressor(coding, s.w)
		s.out = s.closer
	}
	s.w.WriteHeader(http.StatusOK)
}

// finish ends the answer: the whole of it, with its length, when it did
// not spill; the compressor's last bytes when it did.
func (s *spillWriter) finish() error {
	if s.out != nil {
		if s.closer != nil {
			s.deadline()
			return s.closer.Close()
		}
		return nil
	}
	out, coding := encodeAnswer(s.accept, s.kept)
	if coding != codingIdentity {
		s.w.Header().Set("Content-Encoding", coding)
	}
	s.w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	s.w.WriteHeader(http.StatusOK)
	s.deadline()
	_, err := s.w.Write(out)
	return err
}
