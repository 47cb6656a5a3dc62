package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeHost lays out the host files the distroless stand-in reads.
func fakeHost(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(p, data string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/ssl/certs/ca-certificates.crt", "-----BEGIN CERTIFICATE-----\n")
	write("etc/services", "http 80/tcp\n")
	write("usr/share/zoneinfo/Europe/Paris", "TZif")
	for link, target := range map[string]string{"usr/share/zoneinfo/CET": "Europe/Paris", "usr/share/zoneinfo/localtime": "/etc/localtime"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type tarFile struct {
	hdr  *tar.Header
	data string
}

func readLayer(t *testing.T, gz []byte) map[string]tarFile {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]tarFile{}
	var last string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name <= last {
			t.Errorf("%s after %s: entries not sorted", hdr.Name, last)
		}
		last = hdr.Name
		data, _ := io.ReadAll(tr)
		files[strings.TrimSuffix(hdr.Name, "/")] = tarFile{hdr, string(data)}
	}
	return files
}

func buildTestImage(t *testing.T, host, stage string, created time.Time) *Archive {
	t.Helper()
	df := "FROM gcr.io/distroless/static-debian12:nonroot\nCOPY --from=build /out/app /app\nCOPY --from=build --chown=65532 /out/data/ /srv/data/\nUSER 65532:65532\nENTRYPOINT [\"/app\"]\n"
	d, err := ParseDockerfile(strings.NewReader(df), nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := BuildFinal(d, Options{HostRoot: host, Stages: map[string]string{"build": stage}})
	if err != nil {
		t.Fatal(err)
	}
	refs := []Ref{{"example.com/app", "v1"}, {"example.com/app", "latest"}}
	a, err := Pack(img, refs, Platform{Architecture: "amd64", OS: "linux"}, created)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func blobData(t *testing.T, a *Archive, digest string) []byte {
	t.Helper()
	for _, b := range a.blobs {
		if b.digest == digest {
			return b.data
		}
	}
	t.Fatalf("no blob %s", digest)
	return nil
}

func TestImageLayersAndArchive(t *testing.T) {
	t.Parallel()
	host := fakeHost(t)
	stage := t.TempDir()
	if err := os.MkdirAll(filepath.Join(stage, "out/data/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "out/app"), []byte("ELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "out/data/sub/x"), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	created := time.Unix(1700000000, 0).UTC()
	a := buildTestImage(t, host, stage, created)

	if len(a.Layers) != 3 {
		t.Fatalf("%d layers, want base + 2 COPY", len(a.Layers))
	}
	base := readLayer(t, blobData(t, a, a.Layers[0].Digest))
	checks := []struct {
		path     string
		mode     int64
		uid, gid int
	}{
		{"tmp", 0o1777, 0, 0},
		{"home/nonroot", 0o700, 65532, 65532},
		{"root", 0o700, 0, 0},
		{"etc/passwd", 0o644, 0, 0},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, 0, 0},
		{"usr/share/zoneinfo/Europe/Paris", 0o644, 0, 0},
	}
	for _, c := range checks {
		f, ok := base[c.path]
		if !ok {
			t.Errorf("base layer lacks %s", c.path)
			continue
		}
		if f.hdr.Mode != c.mode || f.hdr.Uid != c.uid || f.hdr.Gid != c.gid || f.hdr.Uname != "" || !f.hdr.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: mode %o uid %d gid %d uname %q mtime %v; want %o %d %d, no names, epoch", c.path, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid, f.hdr.Uname, f.hdr.ModTime, c.mode, c.uid, c.gid)
		}
	}
	if !strings.Contains(base["etc/passwd"].data, "nonroot:x:65532:65532:") || !strings.Contains(base["etc/group"].data, "nonroot:x:65532:") {
		t.Errorf("passwd/group lack nonroot 65532:\n%s%s", base["etc/passwd"].data, base["etc/group"].data)
	}
	if l := base["usr/share/zoneinfo/CET"]; l.hdr == nil || l.hdr.Typeflag != tar.TypeSymlink || l.hdr.Linkname != "Europe/Paris" {
		t.Errorf("zoneinfo/CET should be a link to Europe/Paris: %+v", l.hdr)
	}
	if _, ok := base["usr/share/zoneinfo/localtime"]; ok {
		t.Error("a link out of the image (/etc/localtime) was kept")
	}

	app := readLayer(t, blobData(t, a, a.Layers[1].Digest))
	if f := app["app"]; f.hdr == nil || f.hdr.Mode != 0o755 || f.hdr.Uid != 0 || f.data != "ELF" || !f.hdr.ModTime.Equal(created) {
		t.Errorf("app layer: %+v", app)
	}
	data := readLayer(t, blobData(t, a, a.Layers[2].Digest))
	for _, p := range []string{"srv", "srv/data", "srv/data/sub", "srv/data/sub/x"} {
		if _, ok := data[p]; !ok {
			t.Errorf("data layer lacks %s", p)
		}
	}
	if f := data["srv/data/sub/x"]; f.hdr != nil && (f.hdr.Uid != 65532 || f.hdr.Mode != 0o640) {
		t.Errorf("srv/data/sub/x: uid %d mode %o, want 65532 0640", f.hdr.Uid, f.hdr.Mode)
	}
	if f := data["srv"]; f.hdr != nil && f.hdr.Uid != 0 {
		t.Error("a missing parent of the COPY destination took the --chown owner")
	}

	var cfg ConfigFile
	if err := json.Unmarshal(blobData(t, a, a.ConfigDesc.Digest), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || len(cfg.RootFS.DiffIDs) != 3 || cfg.Created != "2023-11-14T22:13:20Z" || cfg.Architecture != "amd64" {
		t.Errorf("config %+v", cfg)
	}

	// Same inputs, same bytes; the base layer does not depend on the date.
	b := buildTestImage(t, host, stage, created)
	if a.Manifest.Digest != b.Manifest.Digest {
		t.Errorf("two builds differ: %s, %s", a.Manifest.Digest, b.Manifest.Digest)
	}
	c := buildTestImage(t, host, stage, created.Add(time.Hour))
	if c.Layers[0].Digest != a.Layers[0].Digest || c.Layers[1].Digest == a.Layers[1].Digest {
		t.Error("the base layer should ignore SOURCE_DATE_EPOCH and the COPY layers honour it")
	}

	// The layout: oci-layout, index.json naming the image for containerd, and every blob.
	var buf bytes.Buffer
	if _, err := a.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&buf)
	names := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		names[hdr.Name] = data
	}
	if string(names["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout %q", names["oci-layout"])
	}
	var idx Index
	if err := json.Unmarshal(names["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != 2 {
		t.Fatalf("index has %d manifests, want one per name", len(idx.Manifests))
	}
	for i, want := range []string{"example.com/app:v1", "example.com/app:latest"} {
		m := idx.Manifests[i]
		if m.Annotations[annotationImageName] != want || m.Annotations[annotationRefName] != strings.TrimPrefix(want, "example.com/app:") ||
			m.Digest != a.Manifest.Digest || m.Platform == nil || m.Platform.OS != "linux" {
			t.Errorf("index entry %d: %+v", i, m)
		}
	}
	for _, d := range append([]Descriptor{a.Manifest, a.ConfigDesc}, a.Layers...) {
		data, ok := names["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok || digestOf(data) != d.Digest || int64(len(data)) != d.Size {
			t.Errorf("blob %s missing or wrong", d.Digest)
		}
	}
}

func TestCopyRefusesMissingStage(t *testing.T) {
	t.Parallel()
	d, err := ParseDockerfile(strings.NewReader("FROM scratch\nCOPY --from=build /out/x /x\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BuildFinal(d, Options{Context: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "-stage build=DIR") {
		t.Errorf("err %v", err)
	}
}

func TestUnixMode(t *testing.T) {
	t.Parallel()
	if m := unixMode(0o1777); m != fs.ModeSticky|0o777 {
		t.Errorf("unixMode(01777) = %v", m)
	}
	if m := unixMode(0o4755); m != fs.ModeSetuid|0o755 {
		t.Errorf("unixMode(04755) = %v", m)
	}
}

func TestParseRef(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Ref{
		"ghcr.io/fairplay/fairplay:v1":   {"ghcr.io/fairplay/fairplay", "v1"},
		"localhost:5000/app":             {"localhost:5000/app", "latest"},
		"registry.k8s.io/pause:3.10.2":   {"registry.k8s.io/pause", "3.10.2"},
		"docker.io/fairplay/fairplay:t1": {"docker.io/fairplay/fairplay", "t1"},
	} {
		if got, err := ParseRef(in); err != nil || got != want {
			t.Errorf("ParseRef(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "app@sha256:00", "app:"} {
		if _, err := ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q) accepted", bad)
		}
	}
}
