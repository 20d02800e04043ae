package inspect

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/par"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
)

// InspectSchemaVersion is the version of the Report JSON layout.
const InspectSchemaVersion = 1

// Report is what `rocmdoctor inspect` shows about one input. Exactly one of
// ELF, Archive or Error is set (Kind "other" carries an Error).
type Report struct {
	Path    string         `json:"path"`
	Kind    string         `json:"kind"` // "elf", "archive", "thin-archive", "other"
	Error   string         `json:"error,omitempty"`
	ELF     *ELFReport     `json:"elf,omitempty"`
	Archive *ArchiveReport `json:"archive,omitempty"`
}

// ELFReport summarises an ELF file.
type ELFReport struct {
	Class        string               `json:"class"`
	Data         string               `json:"data"`
	OSABI        string               `json:"osabi"`
	ABIVersion   int                  `json:"abi_version"`
	Type         string               `json:"type"`
	Machine      string               `json:"machine"`
	Flags        string               `json:"e_flags"`
	AMDGPU       *AMDGPUReport        `json:"amdgpu,omitempty"`
	Interp       string               `json:"interpreter,omitempty"`
	Dynamic      bool                 `json:"dynamic"`
	Soname       string               `json:"soname,omitempty"`
	Needed       []string             `json:"needed"`
	RPath        *string              `json:"rpath,omitempty"`
	RunPath      *string              `json:"runpath,omitempty"`
	DynFlags     []string             `json:"flags,omitempty"`
	DynFlags1    []string             `json:"flags_1,omitempty"`
	GNUStack     string               `json:"gnu_stack"` // "RW", "RWX", "absent"
	TextRel      bool                 `json:"textrel"`
	Symbols      SymbolCounts         `json:"dynamic_symbols"`
	VersionDefs  []string             `json:"version_definitions,omitempty"`
	VersionNeeds []elfx.VersionNeed   `json:"version_requirements,omitempty"`
	GPUTargets   []elfx.GPUTargetStat `json:"gpu_targets,omitempty"`
	// DeviceCodeError says why the device code could not be read in
	// full (a damaged offload bundle, a .hip_fatbin without one, an
	// unknown compression method); GPUTargets then counts what was read
	// before it. The rest of the report does not depend on it.
	DeviceCodeError string `json:"device_code_error,omitempty"`
	// CallsDlopen: the file references dlopen or dlmopen, so it loads
	// libraries that no NEEDED entry names. Dlopen is what its ELF
	// dlopen metadata notes declare; DlopenError says why a note is not
	// valid.
	CallsDlopen bool             `json:"calls_dlopen,omitempty"`
	Dlopen      []elfx.DlopenDep `json:"dlopen,omitempty"`
	DlopenError string           `json:"dlopen_error,omitempty"`
}

// AMDGPUReport is the decoded AMDGPU header of a code object.
type AMDGPUReport struct {
	Processor         string `json:"processor"`
	TargetID          string `json:"target_id"`
	Xnack             string `json:"xnack"`
	SRAMECC           string `json:"sramecc"`
	CodeObjectVersion int    `json:"code_object_version"`
}

// SymbolCounts counts symbols by state.
type SymbolCounts struct {
	Defined       int `json:"defined"`
	Undefined     int `json:"undefined"`
	WeakUndefined int `json:"weak_undefined"`
}

// ArchiveReport summarises a static archive.
type ArchiveReport struct {
	Format       string         `json:"format"` // gnu, bsd, thin
	HasIndex     bool           `json:"has_index"`
	IndexSymbols int            `json:"index_symbols"`
	Members      []MemberReport `json:"members"`
}

// MemberReport summarises one archive member.
type MemberReport struct {
	Name       string               `json:"name"`
	Size       int64                `json:"size"`
	Kind       string               `json:"kind"`
	Class      string               `json:"class,omitempty"`
	Machine    string               `json:"machine,omitempty"`
	Target     string               `json:"amdgpu_target,omitempty"`
	Defined    int                  `json:"defined"`
	Undefined  int                  `json:"undefined"`
	GPUTargets []elfx.GPUTargetStat `json:"gpu_targets,omitempty"`
	Error      string               `json:"error,omitempty"`
}

// Problems lists what could not be read of the input, each naming it:
// the file itself (Error), its device code, or archive members. Empty
// when the report is whole.
func (r Report) Problems() []string {
	var out []string
	if r.Error != "" {
		out = append(out, r.Error)
	}
	if r.ELF != nil && r.ELF.DeviceCodeError != "" {
		out = append(out, r.ELF.DeviceCodeError)
	}
	if r.Archive != nil {
		for _, m := range r.Archive.Members {
			if m.Error != "" {
				out = append(out, m.Error)
			}
		}
	}
	return out
}

// InspectAll is Inspect of each path, read on every core; the reports are
// in the order of paths.
func InspectAll(paths []string) []Report {
	out := make([]Report, len(paths))
	par.For(context.Background(), len(paths), 0, func(i int) { out[i] = Inspect(paths[i]) })
	return out
}

// Inspect opens path and summarises it. Errors are reported in the Report.
func Inspect(path string) Report {
	rep := Report{Path: path, Kind: elfx.KindOther.String()}
	fh, err := regfile.Open(path)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	if !st.Mode().IsRegular() {
		rep.Error = regfile.NotRegular(path, st.Mode()).Error()
		return rep
	}
	kind := elfx.Sniff(fh)
	rep.Kind = kind.String()
	switch kind {
	case elfx.KindELF:
		f, err := elfx.NewFileSize(fh, st.Size(), path)
		if err != nil {
			rep.Error = err.Error()
			return rep
		}
		rep.ELF, err = InspectELF(f)
		if err != nil {
			rep.ELF, rep.Error = nil, err.Error()
		}
	case elfx.KindArchive, elfx.KindThinArchive:
		a, err := elfx.NewArchiveSize(fh, st.Size(), path)
		if err != nil {
			rep.Error = err.Error()
			return rep
		}
		defer a.Close()
		rep.Archive = InspectArchive(a)
	default:
		head := make([]byte, 4096)
		n, _ := fh.ReadAt(head, 0)
		rep.Error = elfx.NotELFOrArchive(path, head[:n]).Error()
	}
	return rep
}

// InspectELF summarises an open ELF file. Device code that cannot be read
// is reported in the summary (DeviceCodeError), not as its error.
func InspectELF(f *elfx.File) (*ELFReport, error) {
	r := &ELFReport{
		Class: f.ClassName(), Data: f.DataName(), OSABI: f.OSABIName(), ABIVersion: int(f.ABIVersion),
		Type: f.TypeName(), Machine: f.MachineName(), Flags: fmt.Sprintf("0x%x", f.Flags),
		Needed: []string{},
	}
	if t := f.AMDGPU; t != nil {
		r.AMDGPU = &AMDGPUReport{Processor: t.Processor, TargetID: t.TargetID(), Xnack: t.Xnack.String(),
			SRAMECC: t.SRAMECC.String(), CodeObjectVersion: t.CodeObjectVersion}
	}
	var err error
	if r.Interp, err = f.Interp(); err != nil {
		return nil, err
	}
	switch st := f.GNUStack(); {
	case !st.Present:
		r.GNUStack = "absent"
	case st.Executable:
		r.GNUStack = "RWX"
	default:
		r.GNUStack = "RW"
	}
	d, err := f.Dynamic()
	switch {
	case err == nil:
		r.Dynamic = true
		r.Soname = d.Soname
		r.Needed = append(r.Needed, d.Needed...)
		if d.HasRPath {
			r.RPath = &d.RPath
		}
		if d.HasRunPath {
			r.RunPath = &d.RunPath
		}
		r.DynFlags = flagNames(d.Flags.String(), uint64(d.Flags))
		r.DynFlags1 = flagNames(d.Flags1.String(), uint64(d.Flags1))
		r.TextRel = d.TextRel
	case !errors.Is(err, elfx.ErrNoDynamic):
		return nil, err
	}
	// Counted in the raw table: decoding every symbol of every file
	// inspected was two thirds of what inspect allocated.
	tab, err := f.DynamicSymbolTable()
	if err != nil {
		return nil, err
	}
	c := tab.Counts()
	if err := tab.Err(); err != nil {
		return nil, err
	}
	r.Symbols = SymbolCounts{Defined: c.Defined, Undefined: c.Undefined, WeakUndefined: c.Weak}
	r.CallsDlopen = c.Undefined > 0 && tab.CallsDlopen()
	if r.Dlopen, err = f.DlopenNotes(); err != nil {
		r.DlopenError = err.Error()
	}
	defs, err := f.VersionDefs()
	if err != nil {
		return nil, err
	}
	for _, v := range defs {
		r.VersionDefs = append(r.VersionDefs, v.Name)
	}
	if r.VersionNeeds, err = f.VersionNeeds(); err != nil {
		return nil, err
	}
	// Device code that cannot be read does not hide what the host side
	// says: the report keeps the code objects read before the damage and
	// says what it is.
	cos, err := f.GPUCodeObjects()
	r.GPUTargets = elfx.TargetStats(cos)
	if err != nil {
		r.DeviceCodeError = err.Error()
	}
	return r, nil
}

// flagNames splits debug/elf's "A+B" flag spelling; a zero value gives nil.
func flagNames(s string, v uint64) []string {
	if v == 0 {
		return nil
	}
	return strings.Split(s, "+")
}

// InspectArchive summarises an open archive and each of its members.
func InspectArchive(a *elfx.Archive) *ArchiveReport {
	r := &ArchiveReport{Format: a.Kind.String(), HasIndex: a.HasIndex, IndexSymbols: len(a.Symbols), Members: []MemberReport{}}
	for i, m := range a.Members {
		r.Members = append(r.Members, inspectMember(a, i, m))
	}
	return r
}

func inspectMember(a *elfx.Archive, i int, m elfx.Member) MemberReport {
	mr := MemberReport{Name: m.Name, Size: m.Size, Kind: elfx.KindOther.String()}
	sr, err := a.Open(i)
	if err != nil {
		mr.Error = err.Error()
		return mr
	}
	mr.Size = sr.Size()
	if k := elfx.Sniff(sr); k != elfx.KindELF {
		mr.Kind = k.String()
		return mr
	}
	mr.Kind = elfx.KindELF.String()
	f, err := elfx.NewFileSize(sr, sr.Size(), a.MemberPath(i))
	if err != nil {
		mr.Error = err.Error()
		return mr
	}
	mr.Class, mr.Machine = f.ClassName(), f.MachineName()
	if f.AMDGPU != nil {
		mr.Target = f.AMDGPU.TargetID()
	}
	syms, err := f.Symbols()
	if err != nil {
		mr.Error = err.Error()
		return mr
	}
	for _, s := range syms {
		if s.Type == elf.STT_SECTION || s.Type == elf.STT_FILE || s.Bind == elf.STB_LOCAL {
			continue
		}
		if s.Defined() {
			mr.Defined++
		} else {
			mr.Undefined++
		}
	}
	cos, err := f.GPUCodeObjects()
	mr.GPUTargets = elfx.TargetStats(cos)
	if err != nil {
		mr.Error = err.Error()
	}
	return mr
}
