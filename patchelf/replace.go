package patchelf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"github.com/rocmdoctor/rocmdoctor/internal/writeback"
)

// replacement is the copy of a file being edited, made next to its
// destination while the edit is still being planned and verified: the copy
// (and the start of its write-back to disk) runs on another core instead
// of after the plan, so the fsync before the rename finds most of the data
// already written. Nothing replaces the destination until commit.
type replacement struct {
	src, dst string
	done     chan struct{}
	stop     atomic.Bool
	tmp      *safefile.Temp
	st       os.FileInfo
	err      error
}

// copyChunk bounds how much is copied between checks for a cancelled
// replacement, so abandoning a 1.3 GB library does not wait for its copy.
const copyChunk = 16 << 20

var errCancelled = errors.New("replacement cancelled")

func startReplacement(src, dst string) *replacement {
	r := &replacement{src: src, dst: dst, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = r.copy()
	}()
	return r
}

func (r *replacement) copy() error {
	in, err := os.Open(r.src)
	if err != nil {
		return err
	}
	defer in.Close()
	if r.st, err = in.Stat(); err != nil {
		return err
	}
	if r.tmp, err = safefile.CreateTemp(filepath.Dir(r.dst), filepath.Base(r.dst)); err != nil {
		// (A writable file in a directory the caller cannot write to is
		// still edited, in place.)
		return fmt.Errorf("%w: no new file can be made beside it (%v)", safefile.ErrNotPreserved, err)
	}
	// A full file system is found before anything is copied.
	if err = safefile.Reserve(r.tmp.File, 0, r.st.Size()); err != nil {
		return err
	}
	// Each copied chunk's write-back is started by another goroutine:
	// starting it can block for a millisecond, which the copy need not wait
	// for.
	wb := make(chan [2]int64, 8)
	wbDone := make(chan struct{})
	go func() {
		defer close(wbDone)
		for c := range wb {
			writeback.Start(r.tmp.File, c[0], c[1])
		}
	}()
	defer func() {
		close(wb)
		<-wbDone
	}()
	for off := int64(0); ; off += copyChunk {
		if r.stop.Load() {
			return errCancelled
		}
		// io.Copy between files uses copy_file_range, so the bytes stay in
		// the kernel.
		n, err := io.Copy(r.tmp.File, io.LimitReader(in, copyChunk))
		if err != nil {
			return err
		}
		wb <- [2]int64{off, n}
		if n < copyChunk {
			return nil
		}
	}
}

// commit waits for the copy, applies the plan to it and puts it in place
// of the destination, durably. A copy that replaces its own original
// (self) gets its owner, group, extended attributes and mode, or the
// commit fails with safefile.ErrNotPreserved; one written to another
// path gets the original's permissions and, where the caller may give
// it, its owner.
func (r *replacement) commit(p *Plan, self bool) (err error) {
	<-r.done
	defer func() {
		if err != nil {
			r.remove()
		}
	}()
	if r.err != nil {
		return r.err
	}
	if err = safefile.Reserve(r.tmp.File, 0, p.SizeAfter(r.st.Size())); err != nil {
		return err
	}
	if err = p.Apply(r.tmp); err != nil {
		return err
	}
	if self {
		err = r.tmp.CopyMeta(r.src, r.st)
	} else {
		err = r.tmp.Chmod(r.st.Mode().Perm())
		sameOwner(r.tmp.File, r.st) // best effort, as cp -p does
	}
	if err != nil {
		return err
	}
	err = r.tmp.Commit(r.dst)
	r.tmp = nil
	return err
}

// discard cancels the copy (if still running) and removes the temporary
// file; it does nothing after a successful commit.
func (r *replacement) discard() {
	r.stop.Store(true)
	<-r.done
	r.remove()
}

func (r *replacement) remove() {
	if r.tmp != nil {
		r.tmp.Discard()
		r.tmp = nil
	}
}
