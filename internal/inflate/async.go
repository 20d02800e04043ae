package inflate

import "io"

// asyncMin is the compressed size from which the sequential decoder hands
// its full output buffers to a goroutine that writes them, and decodes on
// in a second buffer meanwhile. Writing a large library into a new file
// costs the kernel a third of the decoding time (page-cache pages to
// allocate and fill); this way it is spent on another core.
const asyncMin = 1 << 20

// asyncWriter writes one buffer at a time to w on its own goroutine.
type asyncWriter struct {
	w     io.Writer
	work  chan []byte
	done  chan error
	spare []byte // the buffer not being decoded into, once there is one
	busy  bool   // a write is under way
}

func newAsyncWriter(w io.Writer) *asyncWriter {
	a := &asyncWriter{w: w, work: make(chan []byte), done: make(chan error, 1)}
	go func() {
		for b := range a.work {
			_, err := a.w.Write(b)
			a.done <- err
		}
	}()
	return a
}

// wait returns the error of the write under way, if any, once it is done.
func (a *asyncWriter) wait() error {
	if !a.busy {
		return nil
	}
	a.busy = false
	return <-a.done
}

// start begins writing b, which must not change until wait returns.
func (a *asyncWriter) start(b []byte) {
	a.busy = true
	a.work <- b
}

// close waits for the write under way and ends the goroutine.
func (a *asyncWriter) close() {
	a.wait()
	close(a.work)
}

// swap is room for a decoder with an asyncWriter: the unwritten part of
// the full buffer is handed to the writer, and decoding goes on in the
// other buffer, which starts with the last 32 KiB.
func (d *decoder) swap() error {
	a := d.async
	if err := a.wait(); err != nil {
		return err
	}
	d.sum()
	if a.spare == nil {
		a.spare = make([]byte, len(d.out))
	}
	a.start(d.out[d.start:d.pos])
	nb := a.spare
	h := min(window, d.pos)
	copy(nb, d.out[d.pos-h:d.pos])
	a.spare, d.out = d.out, nb
	d.base += int64(d.pos - h)
	d.start, d.pos, d.crcAt = h, h, h
	return nil
}
