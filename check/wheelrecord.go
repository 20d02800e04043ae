package check

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
)

// maxRecord bounds the RECORD read from a wheel (PyTorch's lists ~15,000
// files in ~1.5 MB): what it declares is refused past it, and what it
// inflates to is never more than it declares.
const maxRecord = 16 << 20

// maxGone is how many files RECORD lists that the wheel lacks are named
// one by one.
const maxGone = 100

// wheelRecord checks the members of one wheel against its RECORD, as an
// installer that follows the binary distribution format does (PEP 427:
// every file but RECORD and its signatures listed, and its hash checked
// on extraction; `python -m installer`, which Arch's and Gentoo's Python
// packaging use, and `wheel unpack` refuse a wheel that fails; pip does
// not check). A library edited with patchelf after unpacking and zipped
// again without regenerating RECORD is the vendor-wheel case.
type wheelRecord struct {
	wheel    string // the wheel's path
	distInfo string // its .dist-info directory ("" when it has none)
	name     string // the RECORD member, distInfo/RECORD
	entries  map[string]record.Entry
	seen     map[string]bool
	out      []finding.Finding
}

// newWheelRecord finds the wheel's .dist-info directory and reads its
// RECORD. A wheel without them has findings (installers refuse it) and no
// entries, and its members are not checked one by one. A RECORD that
// cannot be extracted is an error, as any member's is.
func newWheelRecord(wheel string, zr *zip.Reader, raw io.ReaderAt) (*wheelRecord, error) {
	w := &wheelRecord{wheel: wheel, seen: map[string]bool{}}
	dirs := map[string]bool{}
	for _, zf := range zr.File {
		if top, _, ok := strings.Cut(zf.Name, "/"); ok && strings.HasSuffix(top, ".dist-info") {
			dirs[top] = true
		}
	}
	var names []string
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	// The directory the file name promises ({distribution}-{version}),
	// else the only one there is.
	base := filepath.Base(wheel)
	if parts := strings.SplitN(strings.TrimSuffix(base, ".whl"), "-", 3); len(parts) >= 2 && dirs[parts[0]+"-"+parts[1]+".dist-info"] {
		w.distInfo = parts[0] + "-" + parts[1] + ".dist-info"
	} else if len(names) == 1 {
		w.distInfo = names[0]
	}
	switch {
	case len(names) == 0:
		w.add(wheel, "the wheel has no .dist-info directory, so no RECORD: installers refuse it")
		return w, nil
	case len(names) > 1:
		w.add(wheel, fmt.Sprintf("the wheel has %d .dist-info directories (%s): installers refuse it", len(names), strings.Join(names, ", ")))
		if w.distInfo == "" {
			return w, nil
		}
	}
	w.name = w.distInfo + "/RECORD"
	var rec *zip.File
	for _, zf := range zr.File {
		if zf.Name == w.name {
			rec = zf
		}
	}
	if rec == nil {
		w.add(wheel, "the wheel has no "+w.name+": installers refuse it, and nothing says which files are the wheel's")
		return w, nil
	}
	if rec.UncompressedSize64 > maxRecord {
		return nil, fmt.Errorf("%s: declares %d bytes, more than rocmdoctor reads for a RECORD (%d)", zipx.MemberPath(wheel, w.name), rec.UncompressedSize64, maxRecord)
	}
	var buf bytes.Buffer
	if _, err := zipx.Extract(&buf, raw, rec); err != nil {
		return nil, fmt.Errorf("%s: %w", zipx.MemberPath(wheel, w.name), err)
	}
	w.entries = map[string]record.Entry{}
	for _, e := range record.Parse(buf.String()) {
		w.entries[e.Path] = e
	}
	return w, nil
}

func (w *wheelRecord) add(file, msg string) {
	w.out = append(w.out, finding.Finding{Rule: finding.RuleWheelRecord, Severity: finding.SeverityError, File: file, Message: msg, Fix: finding.WheelRecordFix})
}

// unlisted reports whether name is one of the files RECORD does not list
// (itself and its signatures).
func (w *wheelRecord) unlisted(name string) bool {
	return name == w.name || name == w.name+".jws" || name == w.name+".p7s"
}

// verifier is what member zf's content is to be written to while it is
// read (nil when there is nothing to check it against); a member RECORD
// does not list, or lists without a usable hash, is a finding now.
func (w *wheelRecord) verifier(zf *zip.File) *record.Verifier {
	if w == nil || w.entries == nil || w.unlisted(zf.Name) {
		return nil
	}
	e, ok := w.entries[zf.Name]
	if !ok {
		w.add(zipx.MemberPath(w.wheel, zf.Name), zf.Name+" is not listed in "+w.name+": installers refuse the wheel")
		return nil
	}
	w.seen[zf.Name] = true
	v, err := record.NewVerifier(e)
	if err != nil {
		w.add(zipx.MemberPath(w.wheel, zf.Name), zf.Name+" "+err.Error())
		if _, ok := err.(*record.UncheckedError); ok {
			w.out[len(w.out)-1].Severity = finding.SeverityWarning
		}
		return nil
	}
	return v
}

// verified records how member zf, all of which went to v, differs from
// its RECORD line.
func (w *wheelRecord) verified(zf *zip.File, v *record.Verifier) {
	if v == nil {
		return
	}
	if d := v.Mismatch(); d != "" {
		w.add(zipx.MemberPath(w.wheel, zf.Name), zf.Name+" does not match "+w.name+": "+d+" (changed after RECORD was written, as patchelf on an unpacked wheel does); installers refuse the wheel")
	}
}

// finish reports what RECORD lists that the wheel does not have (a
// warning: installers pass over it, but the list is wrong) and returns
// every finding.
func (w *wheelRecord) finish() []finding.Finding {
	if w == nil {
		return nil
	}
	var gone []string
	for p := range w.entries {
		if !w.seen[p] && !w.unlisted(p) && !strings.HasSuffix(p, "/") {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	// A RECORD of millions of made-up lines is one finding past the
	// first maxGone, not millions.
	for i, p := range gone {
		if i == maxGone {
			w.add(zipx.MemberPath(w.wheel, w.name), fmt.Sprintf("%s lists %d more files the wheel does not have", w.name, len(gone)-maxGone))
			w.out[len(w.out)-1].Severity = finding.SeverityWarning
			break
		}
		w.add(zipx.MemberPath(w.wheel, p), w.name+" lists "+p+", which the wheel does not have")
		w.out[len(w.out)-1].Severity = finding.SeverityWarning
	}
	return w.out
}

// hashJob is a member whose content check reads only for its hash.
type hashJob struct {
	at  int // the member's index in the wheel
	zf  *zip.File
	v   *record.Verifier
	err error
}

// hashPool hashes members on every core while the wheel's ELF members are
// checked one after the other: everything but the host libraries (device
// code, data, Python files) is read only for RECORD's sake, and on a
// PyTorch-sized wheel that is most of its bytes.
type hashPool struct {
	raw  io.ReaderAt
	jobs chan *hashJob
	all  []*hashJob
	wg   sync.WaitGroup
}

func newHashPool(raw io.ReaderAt) *hashPool { return &hashPool{raw: raw} }

// add queues member zf (index at) to be written to v.
func (h *hashPool) add(at int, zf *zip.File, v *record.Verifier) {
	if h.jobs == nil {
		h.jobs = make(chan *hashJob, 64)
		for range runtime.GOMAXPROCS(0) {
			h.wg.Add(1)
			go func() {
				defer h.wg.Done()
				for j := range h.jobs {
					hashSlots.acquire()
					_, j.err = zipx.Extract(j.v, h.raw, j.zf)
					hashSlots.release()
				}
			}()
		}
	}
	j := &hashJob{at: at, zf: zf, v: v}
	h.all = append(h.all, j)
	h.jobs <- j
}

// hashSlots bounds the members being hashed at once in the whole process
// to one per core: a scan checks several wheels at a time (two per core),
// each with a pool of its own, and every extraction holds a decoder's
// buffers (MBs).
var hashSlots slots

type slots struct {
	once sync.Once
	c    chan struct{}
	// held counts the slots in use, peak the most at once (which a test
	// reads): two atomic operations per member hashed.
	held, peak atomic.Int64
}

func (s *slots) acquire() {
	s.once.Do(func() { s.c = make(chan struct{}, runtime.GOMAXPROCS(0)) })
	s.c <- struct{}{}
	n := s.held.Add(1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
}

func (s *slots) release() {
	s.held.Add(-1)
	<-s.c
}

// wait returns the queued jobs, in the order they were added, once all
// are done.
func (h *hashPool) wait() []*hashJob {
	if h.jobs != nil {
		close(h.jobs)
		h.wg.Wait()
		h.jobs = nil
	}
	return h.all
}
