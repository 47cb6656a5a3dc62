package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=..." (make
// build, the Dockerfile); currentVersion falls back to the build info.
var version = "dev"

// currentVersion is the version the server reports: the one the build set,
// else the module version the Go toolchain stamped (`go install ...@v1.2.3`,
// or a pseudo-version from the VCS revision in a checkout), else "dev".
func currentVersion() string {
	info, _ := debug.ReadBuildInfo()
	return resolveVersion(version, info)
}

func resolveVersion(set string, info *debug.BuildInfo) string {
	if set != "" && set != "dev" {
		return set
	}
	if info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// printVersion is `fairplay version`: the version alone on one line (the
// image tests compare it with the tag), and with verbose the module, the
// VCS revision and the toolchain from runtime/debug.ReadBuildInfo.
func printVersion(w io.Writer, verbose bool) error {
	info, _ := debug.ReadBuildInfo()
	_, err := io.WriteString(w, formatVersion(version, info, verbose))
	return err
}

func formatVersion(set string, info *debug.BuildInfo, verbose bool) string {
	var b strings.Builder
	fmt.Fprintln(&b, resolveVersion(set, info))
	if !verbose {
		return b.String()
	}
	if info == nil {
		fmt.Fprintf(&b, "go:       %s %s/%s (no build info)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return b.String()
	}
	fmt.Fprintf(&b, "module:   %s %s\n", info.Main.Path, info.Main.Version)
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		if vcs["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		fmt.Fprintf(&b, "revision: %s\n", rev)
		if t := vcs["vcs.time"]; t != "" {
			fmt.Fprintf(&b, "time:     %s\n", t)
		}
	} else {
		b.WriteString("revision: unknown (built outside a checkout, or with -buildvcs=false)\n")
	}
	goos, goarch := vcs["GOOS"], vcs["GOARCH"]
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	fmt.Fprintf(&b, "go:       %s %s/%s\n", info.GoVersion, goos, goarch)
	return b.String()
}
