// Package pflate is a deflate writer that compresses on every core, the way
// pigz does: the input is cut into blocks, each block is compressed on its
// own (ending in a sync flush, so it stops on a byte boundary) by a pool of
// goroutines, and the results are written in order, the last block closing
// the stream. The output is one ordinary deflate stream that any inflater
// reads; it is a little larger than a single-threaded one because matches
// do not reach across blocks (compress/flate's fastest level ignores a
// preset dictionary anyway).
package pflate

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// BlockSize is how much input each worker compresses at a time.
const BlockSize = 1 << 20

type job struct {
	in    []byte
	final bool
	out   *bytes.Buffer
	err   error
	done  chan struct{}
}

// Writer compresses what is written to it into w.
type Writer struct {
	w       io.Writer
	level   int
	buf     []byte
	queue   chan *job // in submission order, for the writer goroutine
	work    chan *job // for the compressing workers
	wg      sync.WaitGroup
	written chan error // result of the writer goroutine
	failed  atomic.Pointer[error]
	err     error
	closed  bool
	blocks  sync.Pool // input blocks (*[]byte, so that Put does not allocate)
	outs    sync.Pool // compressed blocks
}

// NewWriter returns a Writer compressing at level (as compress/flate) with
// up to GOMAXPROCS blocks in flight.
func NewWriter(w io.Writer, level int) (*Writer, error) {
	if _, err := flate.NewWriter(io.Discard, level); err != nil {
		return nil, err
	}
	n := runtime.GOMAXPROCS(0)
	z := &Writer{w: w, level: level, queue: make(chan *job, n), work: make(chan *job, n), written: make(chan error, 1)}
	for range n {
		z.wg.Add(1)
		go z.compressor()
	}
	go z.writer()
	return z, nil
}

func (z *Writer) compressor() {
	defer z.wg.Done()
	fw, _ := flate.NewWriter(nil, z.level)
	for j := range z.work {
		fw.Reset(j.out)
		_, j.err = fw.Write(j.in)
		if j.err == nil {
			if j.final {
				j.err = fw.Close()
			} else {
				j.err = fw.Flush()
			}
		}
		close(j.done)
	}
}

// writer copies finished blocks to w in order; after a failure it drains
// the queue so that submitters never block.
func (z *Writer) writer() {
	var err error
	for j := range z.queue {
		<-j.done
		if err == nil {
			err = j.err
		}
		if err == nil {
			if _, err = z.w.Write(j.out.Bytes()); err != nil {
				z.failed.Store(&err)
			}
		}
		b := j.in[:0]
		z.blocks.Put(&b)
		j.out.Reset()
		z.outs.Put(j.out)
	}
	z.written <- err
}

func (z *Writer) submit(in []byte, final bool) {
	out, ok := z.outs.Get().(*bytes.Buffer)
	if !ok {
		out = new(bytes.Buffer)
	}
	j := &job{in: in, final: final, out: out, done: make(chan struct{})}
	z.queue <- j
	z.work <- j
}

func (z *Writer) block() []byte {
	if b, ok := z.blocks.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, 0, BlockSize)
}

// Write buffers p and hands every full block to the workers.
func (z *Writer) Write(p []byte) (int, error) {
	if z.closed {
		return 0, errors.New("pflate: write after close")
	}
	if e := z.failed.Load(); e != nil {
		return 0, *e
	}
	n := len(p)
	for len(p) > 0 {
		if z.buf == nil {
			z.buf = z.block()
		}
		k := min(len(p), BlockSize-len(z.buf))
		z.buf = append(z.buf, p[:k]...)
		p = p[k:]
		if len(z.buf) == BlockSize {
			z.submit(z.buf, false)
			z.buf = nil
		}
	}
	return n, nil
}

// Close compresses what is left as the final block, waits for every block
// to be written and returns the first error.
func (z *Writer) Close() error {
	if z.closed {
		return z.err
	}
	z.closed = true
	if z.buf == nil {
		z.buf = z.block()
	}
	z.submit(z.buf, true)
	z.buf = nil
	close(z.work)
	close(z.queue)
	z.wg.Wait()
	z.err = <-z.written
	return z.err
}
