package inflate

import (
	"hash/crc32"
	"io"
)

// asyncMin is the compressed size from which the sequential decoder hands
// its full output buffers to a goroutine that sums and writes them, and
// decodes on in a second buffer meanwhile. Writing a large library into a
// new file costs the kernel a third of the decoding time (page-cache
// pages to allocate and fill), and the blocks' CRC-32s a few per cent
// more; this way both are spent on another core.
const asyncMin = 1 << 20

// asyncWriter sums and writes one buffer at a time on its own goroutine.
type asyncWriter struct {
	w     io.Writer
	work  chan asyncJob
	done  chan error
	spare []byte // the buffer not being decoded into, once there is one
	busy  bool   // a job is under way
	segs  []crcSeg
	// crcs[k] is the CRC-32 of block k's output, complete once the last
	// job has been waited for.
	crcs []uint32
}

// crcSeg is part of block's output, out[from:to] of a job's buffer.
type crcSeg struct{ block, from, to int }

type asyncJob struct {
	out   []byte // the buffer
	write []byte // the part of it to write
	segs  []crcSeg
}

func newAsyncWriter(w io.Writer) *asyncWriter {
	a := &asyncWriter{w: w, work: make(chan asyncJob), done: make(chan error, 1)}
	go func() {
		for j := range a.work {
			for _, s := range j.segs {
				for len(a.crcs) <= s.block {
					a.crcs = append(a.crcs, 0)
				}
				a.crcs[s.block] = crc32.Update(a.crcs[s.block], crc32.IEEETable, j.out[s.from:s.to])
			}
			_, err := a.w.Write(j.write)
			a.done <- err
		}
	}()
	return a
}

// wait returns the error of the job under way, if any, once it is done.
func (a *asyncWriter) wait() error {
	if !a.busy {
		return nil
	}
	a.busy = false
	return <-a.done
}

// start sums the segments recorded so far and writes out[from:to]; out
// must not change until wait returns.
func (a *asyncWriter) start(out []byte, from, to int) {
	a.busy = true
	a.work <- asyncJob{out: out, write: out[from:to], segs: a.segs}
	a.segs = nil
}

// close waits for the job under way and ends the goroutine.
func (a *asyncWriter) close() {
	a.wait()
	close(a.work)
}

// sumLater is sum for a decoder with an asyncWriter: the output since the
// last call is recorded as part of the current block, to be summed with
// the buffer it is in.
func (d *decoder) sumLater() {
	a := d.async
	if d.pos > d.crcAt {
		a.segs = append(a.segs, crcSeg{block: len(d.idx.Blocks) - 1, from: d.crcAt, to: d.pos})
	}
	d.crcAt = d.pos
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
	a.start(d.out, d.start, d.pos)
	full := d.out
	d.continueIn(a.spare)
	a.spare = full
	return nil
}

// flushAsync writes what the buffer holds through the writer, waits for
// it and puts the blocks' CRC-32s in the index.
func (d *decoder) flushAsync() error {
	a := d.async
	if err := a.wait(); err != nil {
		return err
	}
	a.start(d.out, d.start, d.pos)
	d.start = d.pos
	if err := a.wait(); err != nil {
		return err
	}
	for k := range d.idx.Blocks {
		if k < len(a.crcs) {
			d.idx.Blocks[k].CRC = a.crcs[k]
		}
	}
	return nil
}
