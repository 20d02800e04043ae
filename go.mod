module github.com/rocmdoctor/rocmdoctor

go 1.26.8

require (
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	github.com/mattn/go-isatty v0.0.20
	// v1.0.9, not v1.1.x: those build an 8192-entry width cache in a package
	// initialiser (660 KB, ~0.3 ms of every command); see cmd/rocmdoctor/init_test.go.
	github.com/olekukonko/tablewriter v1.0.9
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
)

require (
	github.com/klauspost/compress v1.18.2
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/saferwall/elf v0.3.1
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/sys v0.30.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.6.0 // indirect
	github.com/cpuguy83/go-md2man/v2 v2.0.6 // indirect
	github.com/edsrzf/mmap-go v1.1.0 // indirect
	github.com/fatih/color v1.18.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-runewidth v0.0.19 // indirect
	github.com/olekukonko/cat v0.0.0-20250911104152-50322a0618f6 // indirect
	github.com/olekukonko/errors v1.2.0 // indirect
	github.com/olekukonko/ll v0.1.6 // indirect
	github.com/rivo/uniseg v0.2.0 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/saferwall/binstream v0.1.1 // indirect
)
