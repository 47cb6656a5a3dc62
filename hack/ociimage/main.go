// Command ociimage writes the final stage of a Dockerfile as an OCI image
// layout tarball without a container engine: the base image is a stand-in
// laid out from the host's Debian files (see bases), each COPY becomes a layer
// from the build context or from a host directory standing for an earlier
// stage, and USER, ENTRYPOINT, CMD, EXPOSE, LABEL, ENV and WORKDIR are read
// from the Dockerfile into the image config. Output is deterministic: sorted
// entries, numeric owners, fixed mtimes (SOURCE_DATE_EPOCH) and a fixed gzip
// header. `ctr images import` names the image from the index annotations.
//
//	ociimage -f Dockerfile -stage build=bin/image/stage -name ghcr.io/fairplay/fairplay:v1 -o fairplay.tar
//	ociimage -f Dockerfile -print-config
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(argv []string) error {
	fset := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	var (
		dockerfile  = fset.String("f", "Dockerfile", "the Dockerfile whose final stage to build")
		contextDir  = fset.String("context", "", "the build context for COPY without --from (default: the Dockerfile's directory)")
		hostRoot    = fset.String("host-root", "/", "where the base stand-ins read the host's CA certificates, tzdata and netbase")
		platform    = fset.String("platform", "linux/"+runtime.GOARCH, "the image platform, OS/ARCH[/VARIANT]")
		out         = fset.String("o", "", "the OCI layout tarball to write")
		printConfig = fset.Bool("print-config", false, "print the image config read from the Dockerfile as JSON and exit")
		stages      listFlag
		names       listFlag
		buildArgs   listFlag
	)
	fset.Var(&stages, "stage", "NAME=DIR: DIR stands for the root of stage NAME (COPY --from=NAME), repeatable")
	fset.Var(&names, "name", "REPOSITORY[:TAG] to name the image in the index, repeatable")
	fset.Var(&buildArgs, "build-arg", "KEY=VALUE, as for docker build, repeatable")
	if err := fset.Parse(argv); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fset.Args())
	}

	opts := Options{Context: *contextDir, Stages: map[string]string{}, HostRoot: *hostRoot, BuildArgs: map[string]string{}, SkipLayers: *printConfig}
	if opts.Context == "" {
		opts.Context = filepath.Dir(*dockerfile)
	}
	for _, s := range stages {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" || v == "" {
			return fmt.Errorf("-stage %q: want NAME=DIR", s)
		}
		opts.Stages[k] = v
	}
	for _, s := range buildArgs {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("-build-arg %q: want KEY=VALUE", s)
		}
		opts.BuildArgs[k] = v
	}

	f, err := os.Open(*dockerfile)
	if err != nil {
		return err
	}
	d, err := ParseDockerfile(f, opts.BuildArgs)
	_ = f.Close() // read only
	if err != nil {
		return fmt.Errorf("%s: %w", *dockerfile, err)
	}
	img, err := BuildFinal(d, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", *dockerfile, err)
	}
	if *printConfig {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(img.Config)
	}

	if *out == "" {
		return errors.New("-o is required")
	}
	if len(names) == 0 {
		return errors.New("-name is required (the image reference containerd imports it as)")
	}
	var refs []Ref
	for _, n := range names {
		r, err := ParseRef(n)
		if err != nil {
			return err
		}
		refs = append(refs, r)
	}
	plat, err := parsePlatform(*platform)
	if err != nil {
		return err
	}
	created, err := sourceDate()
	if err != nil {
		return err
	}
	a, err := Pack(img, refs, plat, created)
	if err != nil {
		return err
	}
	size, err := a.WriteFile(*out)
	if err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	for _, r := range refs {
		fmt.Printf("image    %s\n", r)
	}
	fmt.Printf("manifest %s (%s)\n", a.Manifest.Digest, plat.OS+"/"+plat.Architecture)
	fmt.Printf("config   %s\n", a.ConfigDesc.Digest)
	for i, l := range img.Layers {
		fmt.Printf("layer    %s %9s  %s\n", a.Layers[i].Digest[:19], human(a.Layers[i].Size), l.CreatedBy)
	}
	fmt.Printf("wrote    %s (%s)\n", *out, human(size))
	return nil
}

func human(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func parsePlatform(s string) (Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return Platform{}, fmt.Errorf("-platform %q: want OS/ARCH[/VARIANT]", s)
	}
	p := Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

// sourceDate is the image's creation time: SOURCE_DATE_EPOCH (the commit
// time, say) or the Unix epoch, never the clock, so builds are reproducible.
func sourceDate() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since the epoch", v)
	}
	return time.Unix(n, 0).UTC(), nil
}
