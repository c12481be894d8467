package daemon

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/kserve"
)

// Content codings of inference bodies, as Triton's HTTP endpoint takes and
// gives them: gzip, and deflate in the zlib format (RFC 1950), which is what
// HTTP's "deflate" names.
const (
	codingIdentity = "identity"
	codingGzip     = kserve.CodingGzip
	codingDeflate  = kserve.CodingDeflate
)

// acceptedCodings is the Accept-Encoding of a refusal for a coding gpuletd
// cannot read (RFC 7694).
const acceptedCodings = "gzip, deflate"

// minCompressedAnswer is the smallest answer compressed when the client
// accepts a compressed one: a smaller one fits a single TCP segment of a
// 1500-byte MTU anyway, so compressing it saves the client nothing and costs
// both sides CPU.
const minCompressedAnswer = 1400

// expansionGuess is how many times its compressed length a compressed body
// is guessed to take once decompressed, to size the buffer it is read into
// (JSON tensors shrink to about 2/5 in gzip, binary float tensors barely
// shrink); a longer body grows the buffer, as a body of unknown length does.
// Without a guess every body took a first buffer of 256 KiB.
const expansionGuess = 8

// decompressorBytes is what a body's decompressor holds while the body is
// read, counted in the budget of request bytes in flight: its 4 KiB read
// buffer and flate's 32 KiB window, with the tables beside them.
const decompressorBytes = 48 << 10

// errUnsupportedCoding is a request body in a coding gpuletd cannot read.
var errUnsupportedCoding = errors.New("unsupported content coding")

// decodedBody gives the reader of an inference body of size bytes (-1 when
// unknown) sent with Content-Encoding coding, and the length to read it
// into: raw itself and size for an uncompressed body, else a reader that
// decompresses raw and gives at most limit bytes, failing with
// *http.MaxBytesError past them (a small body may expand to any size), and a
// guess at its decompressed length for the first buffer (-1 when size is).
func decodedBody(coding string, raw io.Reader, size, limit int64) (io.Reader, int64, error) {
	switch c := strings.ToLower(strings.TrimSpace(coding)); c {
	case "", codingIdentity:
		return raw, size, nil
	case codingGzip, "x-gzip", codingDeflate:
		if c == "x-gzip" {
			c = codingGzip // HTTP/1.1's old name for it
		}
		guess := int64(-1)
		if size >= 0 {
			guess = min(limit, max(size*expansionGuess, 4<<10))
		}
		return &decompressingReader{coding: c, src: raw, left: limit, limit: limit}, guess, nil
	default:
		return nil, 0, fmt.Errorf("%w %q: gpuletd reads gzip and deflate (zlib) bodies", errUnsupportedCoding, coding)
	}
}

// decompressingReader decompresses a body lazily, so that reading its
// header happens where the body's own reads happen (under the body's
// deadline and the byte budget's accounting). Its decompressor goes back to
// a pool once the body ends or fails.
type decompressingReader struct {
	coding string
	src    io.Reader
	dec    io.ReadCloser
	left   int64
	limit  int64
	err    error // the end, once reached: io.EOF or the failure
}

func (d *decompressingReader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.dec == nil {
		dec, err := kserve.NewDecompressor(d.coding, d.src)
		if err != nil {
			return 0, d.end(fmt.Errorf("decompress %s body: %w", d.coding, err))
		}
		d.dec = dec
	}
	if d.left <= 0 {
		// The body is at the limit: one byte more shows it is longer.
		var one [1]byte
		if n, _ := io.ReadFull(d.dec, one[:]); n > 0 {
			return 0, d.end(&http.MaxBytesError{Limit: d.limit})
		}
		return 0, d.end(io.EOF)
	}
	if int64(len(p)) > d.left {
		p = p[:d.left]
	}
	n, err := d.dec.Read(p)
	d.left -= int64(n)
	switch {
	case errors.Is(err, io.EOF):
		return n, d.end(io.EOF)
	case err != nil:
		return n, d.end(fmt.Errorf("decompress %s body: %w", d.coding, err))
	}
	return n, nil
}

// end keeps err as the body's end and gives the decompressor back.
func (d *decompressingReader) end(err error) error {
	d.err = err
	if d.dec != nil {
		_ = d.dec.Close()
		d.dec = nil
	}
	return err
}

// answerCoding picks the coding of an answer for the request's
// Accept-Encoding: the accepted gzip or deflate of highest weight (the first
// listed of equal ones; "*" counts as gzip), or identity when none is
// accepted above weight 0 or identity weighs more.
func answerCoding(accept string) string {
	best, weight := codingIdentity, 0.0
	for part := range strings.SplitSeq(accept, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				continue
			}
			q = f
		}
		if name == "*" {
			name = codingGzip
		}
		switch name {
		case codingIdentity, codingGzip, codingDeflate:
			if q > weight {
				best, weight = name, q
			}
		}
	}
	return best
}

// encodeAnswer gives the body to write for an answer and its coding: the
// answer compressed in the coding the request accepts, when it is large
// enough to gain from it, else the answer as it is.
func encodeAnswer(acceptEncoding string, body []byte) ([]byte, string) {
	if len(body) < minCompressedAnswer || acceptEncoding == "" {
		return body, codingIdentity
	}
	coding := answerCoding(acceptEncoding)
	if coding == codingIdentity {
		return body, codingIdentity
	}
	out, err := kserve.Compress(coding, body)
	if err != nil {
		// Writing into memory does not fail; should it, the answer goes
		// as it is, which every client reads.
		return body, codingIdentity
	}
	return out, coding
}
