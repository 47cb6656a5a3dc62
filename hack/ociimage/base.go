package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Base is a stand-in for a base image we cannot pull: its config and a
// function that lays out its root filesystem from the host's files (nil for
// scratch, which has no layer).
type Base struct {
	Config  ImageConfig
	Entries func(hostRoot string) ([]Entry, error)
	Comment string
}

const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// bases are the FROM lines this program can stand in for.
//
// gcr.io/distroless/static-debian12 is rebuilt from what distroless puts in
// it (GoogleContainerTools/distroless base/base.bzl, common/BUILD.bazel):
// /etc/passwd and /etc/group with root, nobody and nonroot (65532),
// nsswitch.conf, /etc/os-release, netbase's files, the CA bundle from
// ca-certificates, tzdata, /tmp 1777, /root 0700 and /home/nonroot 0700 owned
// by 65532 — taken from this host's Debian 12 packages instead of the
// snapshot distroless pins. The :nonroot tag runs as 65532 in /home/nonroot.
var bases = map[string]Base{
	"scratch": {Config: ImageConfig{Env: []string{defaultPath}}},
	"gcr.io/distroless/static-debian12:nonroot": {
		Config:  ImageConfig{User: "65532", WorkingDir: "/home/nonroot", Env: distrolessEnv},
		Entries: distrolessStatic,
		Comment: distrolessComment,
	},
	"gcr.io/distroless/static-debian12:latest": {
		Config:  ImageConfig{User: "0", WorkingDir: "/", Env: distrolessEnv},
		Entries: distrolessStatic,
		Comment: distrolessComment,
	},
	"gcr.io/distroless/static-debian12": {
		Config:  ImageConfig{User: "0", WorkingDir: "/", Env: distrolessEnv},
		Entries: distrolessStatic,
		Comment: distrolessComment,
	},
}

var distrolessEnv = []string{defaultPath, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}

const distrolessComment = "hack/ociimage: passwd, group, nsswitch.conf, CA certificates, tzdata and netbase from the host's Debian packages"

const (
	passwd = `root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
`
	group = `root:x:0:
nobody:x:65534:
tty:x:5:
staff:x:50:
nonroot:x:65532:
`
	nsswitch = `# /etc/nsswitch.conf: files only, then DNS for hosts (no NSS modules in a static image).
passwd:         files
group:          files
shadow:         files
gshadow:        files

hosts:          files dns
networks:       files

protocols:      files
services:       files
ethers:         files
rpc:            files
`
)

func distrolessStatic(hostRoot string) ([]Entry, error) {
	dir := func(p string, mode fs.FileMode, id int) Entry {
		return Entry{Path: p, Mode: fs.ModeDir | mode, UID: id, GID: id}
	}
	file := func(p, data string) Entry {
		return Entry{Path: p, Mode: 0o644, Data: []byte(data)}
	}
	entries := []Entry{
		dir("etc", 0o755, 0),
		dir("etc/ssl", 0o755, 0),
		dir("etc/ssl/certs", 0o755, 0),
		dir("home", 0o755, 0),
		dir("home/nonroot", 0o700, 65532),
		dir("root", 0o700, 0),
		dir("tmp", fs.ModeSticky|0o777, 0),
		dir("usr", 0o755, 0),
		dir("usr/share", 0o755, 0),
		dir("var", 0o755, 0),
		file("etc/passwd", passwd),
		file("etc/group", group),
		file("etc/nsswitch.conf", nsswitch),
	}
	host := func(p string) string { return filepath.Join(hostRoot, filepath.FromSlash(p)) }

	// The CA bundle update-ca-certificates builds from Debian's ca-certificates.
	ca := "etc/ssl/certs/ca-certificates.crt"
	data, err := os.ReadFile(host(ca))
	if err != nil {
		return nil, fmt.Errorf("CA certificates (apt-get install ca-certificates): %w", err)
	}
	entries = append(entries, Entry{Path: ca, Mode: 0o644, Data: data})

	// Optional: os-release (base-files) and netbase's tables.
	for _, p := range []string{"etc/os-release", "etc/services", "etc/protocols", "etc/rpc", "etc/ethertypes"} {
		data, err := os.ReadFile(host(p)) // follows /etc/os-release -> ../usr/lib/os-release
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		entries = append(entries, Entry{Path: p, Mode: 0o644, Data: data})
	}

	// tzdata, when installed: files and relative links; links out of the tree
	// (localtime -> /etc/localtime) would dangle in the image.
	zoneinfo := "usr/share/zoneinfo"
	if _, err := os.Stat(host(zoneinfo)); err == nil {
		err := filepath.WalkDir(host(zoneinfo), func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(host(zoneinfo), p)
			name := path.Join(zoneinfo, filepath.ToSlash(rel))
			switch {
			case de.IsDir():
				entries = append(entries, dir(name, 0o755, 0))
			case de.Type()&fs.ModeSymlink != 0:
				t, err := os.Readlink(p)
				if err != nil {
					return err
				}
				if path.IsAbs(t) || !strings.HasPrefix(path.Join(path.Dir(name), t), zoneinfo+"/") {
					return nil
				}
				entries = append(entries, Entry{Path: name, Mode: fs.ModeSymlink | 0o777, Link: t})
			case de.Type().IsRegular():
				entries = append(entries, Entry{Path: name, Mode: 0o644, Src: p})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("tzdata: %w", err)
		}
	}
	return entries, nil
}
