package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// OCI media types and the annotations containerd's importer reads.
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"

	annotationRefName   = "org.opencontainers.image.ref.name"
	annotationCreated   = "org.opencontainers.image.created"
	annotationImageName = "io.containerd.image.name" // `ctr images import` names the image from this
)

// Platform is an OCI platform.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
}

// Descriptor is an OCI content descriptor.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *Platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ConfigFile is the OCI image configuration.
type ConfigFile struct {
	Created      string      `json:"created,omitempty"`
	Architecture string      `json:"architecture"`
	OS           string      `json:"os"`
	Variant      string      `json:"variant,omitempty"`
	Config       ImageConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []History `json:"history,omitempty"`
}

// Manifest is an OCI image manifest.
type Manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        Descriptor        `json:"config"`
	Layers        []Descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Index is an OCI image index (index.json of the layout).
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// blob is one content-addressed file of the layout.
type blob struct {
	digest string
	data   []byte
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeLayer writes entries as a gzipped tar, sorted by path, with numeric
// owners, no user or group names and every mtime set to mtime, so the same
// files give the same bytes. It returns the compressed blob and the digest of
// the uncompressed tar (the config's diff_id).
func writeLayer(entries []Entry, mtime time.Time) (gz []byte, diffID string, err error) {
	sorted := append([]Entry(nil), entries...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, "", err
	}
	diff := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(zw, diff))
	seen := map[string]bool{}
	for _, e := range sorted {
		if seen[e.Path] {
			return nil, "", fmt.Errorf("%s twice in one layer", e.Path)
		}
		seen[e.Path] = true
		hdr := &tar.Header{
			Name:    e.Path,
			Mode:    int64(e.Mode.Perm()),
			Uid:     e.UID,
			Gid:     e.GID,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		if e.Mode&fs.ModeSetuid != 0 {
			hdr.Mode |= 0o4000
		}
		if e.Mode&fs.ModeSetgid != 0 {
			hdr.Mode |= 0o2000
		}
		if e.Mode&fs.ModeSticky != 0 {
			hdr.Mode |= 0o1000
		}
		var content []byte
		switch {
		case e.Mode.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, e.Path+"/"
		case e.Mode&fs.ModeSymlink != 0:
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.Link
		case e.Mode.IsRegular() && e.Src != "":
			hdr.Typeflag = tar.TypeReg
			if err := writeFileEntry(tw, hdr, e.Src); err != nil {
				return nil, "", fmt.Errorf("%s: %w", e.Path, err)
			}
			continue
		case e.Mode.IsRegular():
			hdr.Typeflag, hdr.Size, content = tar.TypeReg, int64(len(e.Data)), e.Data
		default:
			return nil, "", fmt.Errorf("%s: unsupported file type %v", e.Path, e.Mode.Type())
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, "", fmt.Errorf("%s: %w", e.Path, err)
		}
		if _, err := tw.Write(content); err != nil {
			return nil, "", fmt.Errorf("%s: %w", e.Path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), "sha256:" + hex.EncodeToString(diff.Sum(nil)), nil
}

// writeFileEntry writes a host file as a regular file entry of hdr.
func writeFileEntry(tw *tar.Writer, hdr *tar.Header, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	st, err := f.Stat()
	if err != nil {
		return err
	}
	hdr.Size = st.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	if err != nil {
		return err
	}
	if n != hdr.Size {
		return fmt.Errorf("changed while being read")
	}
	return nil
}

// Ref is one name the archive gives the image: a full reference
// (registry/repository:tag).
type Ref struct{ Name, Tag string }

// ParseRef splits "registry/repo:tag" (the tag defaults to latest).
func ParseRef(s string) (Ref, error) {
	if s == "" || strings.Contains(s, "@") {
		return Ref{}, fmt.Errorf("image name %q: want REPOSITORY[:TAG]", s)
	}
	name, tag := s, "latest"
	if i := strings.LastIndex(s, ":"); i > strings.LastIndex(s, "/") {
		name, tag = s[:i], s[i+1:]
	}
	if name == "" || tag == "" {
		return Ref{}, fmt.Errorf("image name %q: want REPOSITORY[:TAG]", s)
	}
	return Ref{Name: name, Tag: tag}, nil
}

func (r Ref) String() string { return r.Name + ":" + r.Tag }

// Archive is a built image ready to be written as an OCI layout tarball.
type Archive struct {
	Index      Index
	Manifest   Descriptor
	ConfigDesc Descriptor
	Layers     []Descriptor
	Config     ConfigFile
	blobs      []blob
}

// Pack turns the image into blobs: one gzipped layer per Layer, the config
// (architecture, os, created, diff_ids, history) and the manifest, and an
// index naming it once per ref for containerd (io.containerd.image.name) and
// for OCI tools (org.opencontainers.image.ref.name, the tag).
func Pack(img *Image, refs []Ref, plat Platform, created time.Time) (*Archive, error) {
	a := &Archive{}
	cfg := ConfigFile{Architecture: plat.Architecture, OS: plat.OS, Variant: plat.Variant, Config: img.Config}
	cfg.Created = created.UTC().Format(time.RFC3339)
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{}
	// Compress the layers side by side (the two binaries take most of the time).
	type result struct {
		gz     []byte
		diffID string
		err    error
	}
	results := make([]result, len(img.Layers))
	var wg sync.WaitGroup
	for i, l := range img.Layers {
		// The base stand-in keeps the epoch (0) whatever the commit, so its
		// layer is the same blob in every build from the same host files.
		mtime := created
		if i == 0 && img.Base != "scratch" {
			mtime = time.Unix(0, 0)
		}
		wg.Go(func() {
			r := &results[i]
			r.gz, r.diffID, r.err = writeLayer(l.Entries, mtime)
		})
	}
	wg.Wait()
	var layers []Descriptor
	for i, r := range results {
		if r.err != nil {
			return nil, fmt.Errorf("layer %d (%s): %w", i, img.Layers[i].CreatedBy, r.err)
		}
		d := digestOf(r.gz)
		a.blobs = append(a.blobs, blob{d, r.gz})
		layers = append(layers, Descriptor{MediaType: mediaLayer, Digest: d, Size: int64(len(r.gz))})
		cfg.RootFS.DiffIDs = append(cfg.RootFS.DiffIDs, r.diffID)
	}
	for _, h := range img.History {
		h.Created = cfg.Created
		cfg.History = append(cfg.History, h)
	}
	a.Config = cfg
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cfgDesc := Descriptor{MediaType: mediaConfig, Digest: digestOf(cfgJSON), Size: int64(len(cfgJSON))}
	a.blobs = append(a.blobs, blob{cfgDesc.Digest, cfgJSON})
	if layers == nil {
		layers = []Descriptor{}
	}
	a.ConfigDesc, a.Layers = cfgDesc, layers
	man := Manifest{SchemaVersion: 2, MediaType: mediaManifest, Config: cfgDesc, Layers: layers,
		Annotations: map[string]string{annotationCreated: cfg.Created}}
	manJSON, err := json.Marshal(man)
	if err != nil {
		return nil, err
	}
	a.Manifest = Descriptor{MediaType: mediaManifest, Digest: digestOf(manJSON), Size: int64(len(manJSON)), Platform: &plat}
	a.blobs = append(a.blobs, blob{a.Manifest.Digest, manJSON})
	a.Index = Index{SchemaVersion: 2, MediaType: mediaIndex}
	for _, r := range refs {
		d := a.Manifest
		d.Annotations = map[string]string{annotationImageName: r.String(), annotationRefName: r.Tag}
		a.Index.Manifests = append(a.Index.Manifests, d)
	}
	return a, nil
}

// WriteTo writes the OCI image layout as a tar: oci-layout, index.json and
// blobs/sha256/<hex>, in that order, with fixed mtimes and root ownership.
func (a *Archive) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	tw := tar.NewWriter(cw)
	epoch := time.Unix(0, 0)
	put := func(name string, data []byte) error {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	idx, err := json.Marshal(a.Index)
	if err != nil {
		return 0, err
	}
	if err := put("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return cw.n, err
	}
	if err := put("index.json", idx); err != nil {
		return cw.n, err
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: dir, Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
			return cw.n, err
		}
	}
	seen := map[string]bool{}
	sorted := append([]blob(nil), a.blobs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].digest < sorted[j].digest })
	for _, b := range sorted {
		if seen[b.digest] { // an empty layer twice, say
			continue
		}
		seen[b.digest] = true
		if err := put("blobs/sha256/"+strings.TrimPrefix(b.digest, "sha256:"), b.data); err != nil {
			return cw.n, err
		}
	}
	if err := tw.Close(); err != nil {
		return cw.n, err
	}
	return cw.n, nil
}

// WriteFile writes the archive to path atomically (a temporary file renamed).
func (a *Archive) WriteFile(path string) (int64, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".ociimage-*")
	if err != nil {
		return 0, err
	}
	n, err := a.WriteTo(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
