package daemon

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Content codings of inference bodies, as Triton's HTTP endpoint takes and
// gives them: gzip, and deflate in the zlib format (RFC 1950), which is what
// HTTP's "deflate" names.
const (
	codingIdentity = "identity"
	codingGzip     = "gzip"
	codingDeflate  = "deflate"
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
	dec    *decompressor
	left   int64
	limit  int64
	err    error // the end, once reached: io.EOF or the failure
}

func (d *decompressingReader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.dec == nil {
		dec, err := openDecompressor(d.coding, d.src)
		if err != nil {
			return 0, d.end(fmt.Errorf("decompress %s body: %w", d.coding, err))
		}
		d.dec = dec
	}
	if d.left <= 0 {
		// The body is at the limit: one byte more shows it is longer.
		var one [1]byte
		if n, _ := io.ReadFull(d.dec.r, one[:]); n > 0 {
			return 0, d.end(&http.MaxBytesError{Limit: d.limit})
		}
		return 0, d.end(io.EOF)
	}
	if int64(len(p)) > d.left {
		p = p[:d.left]
	}
	n, err := d.dec.r.Read(p)
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
		d.dec.release()
		d.dec = nil
	}
	return err
}

// decompressor is a pooled reader of one compressed body: a deflate
// decompressor holds a 32 KiB window, too much to allocate per request.
type decompressor struct {
	r       io.Reader // the decompressed bytes: gz or zl
	br      *bufio.Reader
	gz      *gzip.Reader
	zl      io.ReadCloser
	release func()
}

var decompressors = sync.Pool{New: func() any { return &decompressor{br: bufio.NewReader(nil)} }}

// openDecompressor starts decompressing src. A deflate body may also come
// in gzip's format, as Triton reads either.
func openDecompressor(coding string, src io.Reader) (*decompressor, error) {
	d := decompressors.Get().(*decompressor)
	d.release = func() {
		d.br.Reset(nil)
		d.r = nil
		decompressors.Put(d)
	}
	d.br.Reset(src)
	zlibFormat := false
	if coding == codingDeflate {
		magic, err := d.br.Peek(2)
		if err != nil {
			d.release()
			return nil, noEOF(err)
		}
		zlibFormat = magic[0] != 0x1f || magic[1] != 0x8b
	}
	var err error
	switch {
	case zlibFormat && d.zl != nil:
		err = d.zl.(zlib.Resetter).Reset(d.br, nil)
		d.r = d.zl
	case zlibFormat:
		d.zl, err = zlib.NewReader(d.br)
		d.r = d.zl
	case d.gz != nil:
		err = d.gz.Reset(d.br)
		d.r = d.gz
	default:
		var gz *gzip.Reader
		if gz, err = gzip.NewReader(d.br); err == nil {
			d.gz = gz
		}
		d.r = d.gz
	}
	if err != nil {
		if zlibFormat {
			// A zlib reader that failed its header cannot be reset.
			d.zl = nil
		}
		d.release()
		return nil, noEOF(err)
	}
	return d, nil
}

// noEOF makes a body that ends before its compressed header a truncated
// one rather than an empty one.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
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

// Compressors are reused: a deflate compressor holds about a megabyte of
// tables, too much to build per answer.
var (
	gzipWriters = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(io.Discard, flate.BestSpeed)
		return w
	}}
	zlibWriters = sync.Pool{New: func() any {
		w, _ := zlib.NewWriterLevel(io.Discard, flate.BestSpeed)
		return w
	}}
)

// resettableWriter is a pooled compressor.
type resettableWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// compressAnswer compresses an answer's body in coding (gzip or deflate) at
// the fastest level: answers are latency, not storage.
func compressAnswer(coding string, body []byte) ([]byte, error) {
	pool := &gzipWriters
	if coding == codingDeflate {
		pool = &zlibWriters
	}
	w := pool.Get().(resettableWriter)
	defer pool.Put(w)
	var out bytes.Buffer
	out.Grow(len(body)/2 + 64)
	w.Reset(&out)
	if _, err := w.Write(body); err != nil {
		return nil, fmt.Errorf("compress answer: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress answer: %w", err)
	}
	return out.Bytes(), nil
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
	out, err := compressAnswer(coding, body)
	if err != nil {
		// Writing into memory does not fail; should it, the answer goes
		// as it is, which every client reads.
		return body, codingIdentity
	}
	return out, coding
}
