package check

import (
	"archive/zip"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/member"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"github.com/rocmdoctor/rocmdoctor/internal/writeback"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// wheelStagePrefix names the directories in $TMPDIR where check stages a
// wheel's libraries to bind them (removed after; a run that was killed
// leaves one, which the next check removes).
const wheelStagePrefix = "rocmdoctor-check-"

// wheelClosures binds the host-loadable ELF members of the wheel at path
// (zr its reader, raw its bytes) as they are once pip has installed it:
// each member is staged at its path in a work directory, where $ORIGIN
// finds the wheel's own libraries, and resolved and bound against those
// and the target system (opts.Resolver: --root, --lib-dir), a Python
// extension in opts.Python. The findings are check's for the same files
// unpacked, with the staged paths read as WHEEL!/member.
func wheelClosures(ctx context.Context, path string, zr *zip.Reader, raw io.ReaderAt, opts *scan) ([]finding.Finding, error) {
	var elfs []*zip.File
	var total uint64
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() || zf.UncompressedSize64 < 64 || zf.UncompressedSize64 > member.Max {
			continue
		}
		if _, refused := zipx.NameProblem(zf); refused || strings.Contains(zf.Name, "\\") {
			continue
		}
		head, err := zipx.Head(zf, elfx.HostHeaderLen)
		if err != nil || !elfx.HostLoadable(head) {
			continue
		}
		elfs = append(elfs, zf)
		total += zf.UncompressedSize64
	}
	if len(elfs) == 0 {
		return nil, nil
	}
	if free, ok := writeback.Free(os.TempDir()); ok && total > free {
		return nil, fmt.Errorf("%s: staging its %d libraries to bind them takes %d bytes under %s, which has %d free (set TMPDIR to a directory with more room)", path, len(elfs), total, os.TempDir(), free)
	}
	dir, release, err := safefile.MkdirTemp("", wheelStagePrefix)
	if err != nil {
		return nil, err
	}
	defer release()
	var staged []string
	for _, zf := range elfs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := filepath.Join(dir, filepath.FromSlash(zf.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
		if err != nil {
			return nil, err
		}
		_, err = zipx.Extract(f, raw, zf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", zipx.MemberPath(path, zf.Name), err)
		}
		staged = append(staged, p)
	}
	ro := opts.Resolver
	ro.Files = nil // (the scan's cache keys files by identity; these go away)
	b := symcheck.NewBinder(rpath.New(ro))
	var out []finding.Finding
	for _, p := range staged {
		f, err := elfx.Open(p)
		if err != nil {
			continue // (the member's own rules reported it)
		}
		ff := factsOf(f)
		f.Close()
		if ff.typ != elf.ET_DYN && ff.typ != elf.ET_EXEC || ff.dynErr != nil || ff.dyn == nil {
			continue
		}
		module, python := symcheck.ModuleKind(ff.typ, ff.hasInterp, ff.dyn, p)
		fs, _, err := bindFindings(ctx, b, p, ff, module, python, opts)
		if err != nil {
			return nil, unstageErr(err, dir, path)
		}
		for _, fd := range fs {
			out = append(out, unstage(fd, dir, path))
		}
	}
	return out, nil
}

// unstage reads the staged paths in fd as the wheel's members.
func unstage(fd finding.Finding, dir, wheel string) finding.Finding {
	r := strings.NewReplacer(dir+string(filepath.Separator), wheel+zipx.MemberSep)
	fd.File = r.Replace(fd.File)
	fd.Message = r.Replace(fd.Message)
	fd.Fix = r.Replace(fd.Fix)
	for i, s := range fd.ReferencedBy {
		fd.ReferencedBy[i] = r.Replace(s)
	}
	return fd
}

func unstageErr(err error, dir, wheel string) error {
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), wheel+zipx.MemberSep))
}
