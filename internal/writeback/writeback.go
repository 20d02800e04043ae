// Package writeback lets a large new file reach the disk while it is still
// being written: rocmdoctor fsyncs every file it replaces before renaming
// it into place, and an fsync that finds hundreds of megabytes still dirty
// waits for all of them at the end.
package writeback

import "os"

// Chunk is how many bytes a Writer lets accumulate before it starts their
// write-back.
const Chunk = 8 << 20

// Writer writes sequentially to F from its current offset (Off) and starts
// the write-back of every Chunk bytes written.
type Writer struct {
	F       *os.File
	Off     int64 // offset of the next byte
	started int64 // write-back started below this offset
}

func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.F.Write(p)
	w.Off += int64(n)
	if w.Off-w.started >= Chunk {
		Start(w.F, w.started, w.Off-w.started)
		w.started = w.Off
	}
	return n, err
}
