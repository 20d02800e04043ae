package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"go.yaml.in/yaml/v3"
)

// ConfigFileNames are the configuration files Run looks for, in the
// order they are tried in each directory.
var ConfigFileNames = []string{".rocmdoctor.toml", ".rocmdoctor.yaml", ".rocmdoctor.yml"}

// FindConfig returns the nearest configuration file (see ConfigFileNames) in
// start's directory or its parents, or "" when there is none.
func FindConfig(start string) string {
	dir, err := filepath.Abs(start)
	if err != nil {
		return ""
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	for {
		for _, name := range ConfigFileNames {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// LoadConfig reads a .rocmdoctor.toml (or the same settings as
// .rocmdoctor.yaml/.yml) into opts:
//
//	glibc = "2.28"            # baseline for RD1208
//	glibcxx = "3.4.25"        # baseline for RD1209
//	expect_runpath = true     # enable RD1204
//	dlopen_strings = true     # enable RD1010
//	gpu_targets = ["gfx90a", "gfx1100"]   # enable RD1401/RD1402 (or "gfx90a;gfx1100")
//	baseline = "rocmdoctor-baseline.json"   # relative to the file
//	[severity]                # per rule ID or name: error, warning, note, off
//	RD1207 = "off"
//	[[ignore]]                # all given fields must match
//	rules = ["RD1001"]        # or rule = "undefined-symbol"
//	path = "**/libcuda*.so*"
//	symbol = "LLVMInitialize*"
//	soname = "libamdhip64.so.*"
//
// TOML is read with go-toml and YAML with yaml.v3, strictly: an unknown
// key, or a value of the wrong type, is an error naming the file and line.
// Values already set in opts (from flags) win over the file.
func LoadConfig(path string, opts *Options) (baseline string, err error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return "", err
	}
	var c fileConfig
	if ext := filepath.Ext(path); ext == ".yaml" || ext == ".yml" {
		err = decodeYAML(b, &c)
	} else {
		err = decodeTOML(b, &c)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	bad := func(key string, e error) error {
		if line := lineOf(b, key); line > 0 {
			return fmt.Errorf("%s: line %d: %w", path, line, e)
		}
		return fmt.Errorf("%s: %w", path, e)
	}
	if c.Glibc != nil && opts.Glibc == "" {
		opts.Glibc = *c.Glibc
	}
	if c.Glibcxx != nil && opts.Glibcxx == "" {
		opts.Glibcxx = *c.Glibcxx
	}
	if c.Baseline != nil {
		baseline = filepath.Join(filepath.Dir(path), *c.Baseline)
	}
	opts.ExpectRunpath = opts.ExpectRunpath || c.ExpectRunpath != nil && *c.ExpectRunpath
	opts.DlopenStrings = opts.DlopenStrings || c.DlopenStrings != nil && *c.DlopenStrings
	if c.GPUTargets != nil && len(opts.GPUTargets) == 0 {
		var ts []string
		switch v := c.GPUTargets.(type) {
		case string:
			ts = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' })
		case []any:
			for _, x := range v {
				s, ok := x.(string)
				if !ok {
					return "", bad("gpu_targets", errors.New("gpu_targets must be an array of strings or a string"))
				}
				ts = append(ts, s)
			}
		default:
			return "", bad("gpu_targets", errors.New("gpu_targets must be an array of strings or a string"))
		}
		for _, t := range ts {
			if _, err := elfx.ParseTargetID(t); err != nil {
				return "", bad("gpu_targets", fmt.Errorf("gpu_targets: %q: %w", t, err))
			}
		}
		opts.GPUTargets = ts
	}
	for k, v := range c.Severity {
		if _, ok := finding.LookupRule(k); !ok {
			return "", bad(k, fmt.Errorf("[severity]: unknown rule %q", k))
		}
		sev, err := finding.ParseSeverity(v)
		if err != nil {
			return "", bad(k, fmt.Errorf("[severity] %s: %w", k, err))
		}
		if opts.Severity == nil {
			opts.Severity = map[string]finding.Severity{}
		}
		opts.Severity[k] = sev
	}
	for i, ci := range c.Ignore {
		ig := Ignore{Rules: ci.Rules, Path: ci.Path, Symbol: ci.Symbol, Soname: ci.Soname}
		if ci.Rule != "" {
			ig.Rules = append(ig.Rules, ci.Rule)
		}
		for _, r := range ig.Rules {
			if _, ok := finding.LookupRule(r); !ok {
				return "", bad(r, fmt.Errorf("[[ignore]] %d: unknown rule %q", i+1, r))
			}
		}
		if len(ig.Rules) == 0 && ig.Path == "" && ig.Symbol == "" && ig.Soname == "" {
			return "", fmt.Errorf("%s: [[ignore]] %d matches everything; give rules, path, symbol or soname", path, i+1)
		}
		opts.Ignores = append(opts.Ignores, ig)
	}
	return baseline, nil
}

// fileConfig is what a configuration file may say; nothing else.
type fileConfig struct {
	Glibc         *string           `toml:"glibc" yaml:"glibc"`
	Glibcxx       *string           `toml:"glibcxx" yaml:"glibcxx"`
	Baseline      *string           `toml:"baseline" yaml:"baseline"`
	ExpectRunpath *bool             `toml:"expect_runpath" yaml:"expect_runpath"`
	DlopenStrings *bool             `toml:"dlopen_strings" yaml:"dlopen_strings"`
	GPUTargets    any               `toml:"gpu_targets" yaml:"gpu_targets"` // a string or an array of strings
	Severity      map[string]string `toml:"severity" yaml:"severity"`
	Ignore        []fileIgnore      `toml:"ignore" yaml:"ignore"`
}

type fileIgnore struct {
	Rules  []string `toml:"rules" yaml:"rules"`
	Rule   string   `toml:"rule" yaml:"rule"`
	Path   string   `toml:"path" yaml:"path"`
	Symbol string   `toml:"symbol" yaml:"symbol"`
	Soname string   `toml:"soname" yaml:"soname"`
}

// decodeTOML decodes b strictly; errors say the line.
func decodeTOML(b []byte, c *fileConfig) error {
	err := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields().Decode(c)
	var missing *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case errors.As(err, &missing) && len(missing.Errors) > 0:
		e := missing.Errors[0]
		row, _ := e.Position()
		return fmt.Errorf("line %d: unknown setting %q", row, strings.Join(e.Key(), "."))
	case errors.As(err, &de):
		row, _ := de.Position()
		return fmt.Errorf("line %d: %s", row, de.Error())
	}
	return err
}

// decodeYAML decodes b strictly (yaml.v3's errors say the line).
func decodeYAML(b []byte, c *fileConfig) error {
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// lineOf is the first line of src that sets key (as `key =`, `key:` or
// a quoted "key"), for errors found after decoding; 0 when none does.
func lineOf(src []byte, key string) int {
	for i, l := range strings.Split(string(src), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, key+" ") || strings.HasPrefix(l, key+"=") || strings.HasPrefix(l, key+":") || strings.Contains(l, `"`+key+`"`) {
			return i + 1
		}
	}
	return 0
}

type baselineFile struct {
	SchemaVersion int      `json:"schema_version"`
	Fingerprints  []string `json:"fingerprints"`
}

// ReadBaseline reads fingerprints written by WriteBaseline.
func ReadBaseline(path string) (map[string]bool, error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var bf baselineFile
	if err := json.Unmarshal(b, &bf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := map[string]bool{}
	for _, f := range bf.Fingerprints {
		m[f] = true
	}
	return m, nil
}

// WriteBaseline records the fingerprints of rep's findings.
func WriteBaseline(path string, rep *Report) error {
	bf := baselineFile{SchemaVersion: 1, Fingerprints: []string{}}
	for _, f := range rep.Findings {
		bf.Fingerprints = append(bf.Fingerprints, f.Fingerprint())
	}
	sort.Strings(bf.Fingerprints)
	b, err := json.MarshalIndent(bf, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteFile(path, append(b, '\n'), 0o644)
}
