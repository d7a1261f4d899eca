// Command ociimage builds and unpacks the pdpp-mcp container image without a
// container engine, as an OCI image layout in a tar file (what `docker load`,
// podman and skopeo read).
//
//	ociimage build -bin pdpp-mcp -arch amd64 -version v1.2.3 -o image.tar
//	ociimage extract -i image.tar -dir rootfs   (prints the config as JSON)
//
// The image holds what the distroless static nonroot base holds that a
// static Go binary needs: the binary, a passwd and group naming the nonroot
// user (65532), a writable /tmp and CA certificates when the host has them.
// The Dockerfile is the engine-built equivalent on the real distroless base.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	serverName = "io.github.pdpp-mcp/pdpp-mcp"
	entrypoint = "/usr/local/bin/pdpp-mcp"
	nonroot    = "65532:65532"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ociimage build|extract [flags]")
		os.Exit(64)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = buildCmd(os.Args[2:])
	case "extract":
		err = extractCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Created      string `json:"created,omitempty"`
	Config       struct {
		User       string              `json:"User"`
		Entrypoint []string            `json:"Entrypoint"`
		Env        []string            `json:"Env"`
		Labels     map[string]string   `json:"Labels"`
		WorkingDir string              `json:"WorkingDir"`
		Exposed    map[string]struct{} `json:"ExposedPorts,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

type manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        descriptor        `json:"config"`
	Layers        []descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func buildCmd(args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	bin := fs.String("bin", "", "static linux pdpp-mcp binary")
	arch := fs.String("arch", "amd64", "GOARCH of the binary")
	version := fs.String("version", "dev", "image version annotation")
	tag := fs.String("tag", "ghcr.io/pdpp-mcp/pdpp-mcp", "image reference name annotation (without the version)")
	out := fs.String("o", "image.tar", "output tar file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" {
		return errors.New("-bin is required")
	}
	exe, err := os.ReadFile(*bin)
	if err != nil {
		return err
	}
	// One fixed time keeps the image reproducible for a given binary.
	epoch := time.Unix(0, 0).UTC()
	layer, diffID, err := rootLayer(exe, epoch)
	if err != nil {
		return err
	}
	var cfg imageConfig
	cfg.Architecture, cfg.OS, cfg.Created = *arch, "linux", epoch.Format(time.RFC3339)
	cfg.Config.User = nonroot
	cfg.Config.Entrypoint = []string{entrypoint}
	cfg.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cfg.Config.Labels = map[string]string{
		"io.modelcontextprotocol.server.name": serverName,
		"org.opencontainers.image.source":     "https://github.com/pdpp-mcp/pdpp-mcp",
		"org.opencontainers.image.licenses":   "Apache-2.0",
		"org.opencontainers.image.version":    *version,
	}
	cfg.Config.WorkingDir = "/home/nonroot"
	cfg.Config.Exposed = map[string]struct{}{"8080/tcp": {}}
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{diffID}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	m := manifest{
		SchemaVersion: 2,
		MediaType:     "application/vnd.oci.image.manifest.v1+json",
		Config:        descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: digest(cfgJSON), Size: int64(len(cfgJSON))},
		Layers:        []descriptor{{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: digest(layer), Size: int64(len(layer))}},
	}
	mJSON, err := json.Marshal(m)
	if err != nil {
		return err
	}
	idx := index{SchemaVersion: 2, MediaType: "application/vnd.oci.image.index.v1+json", Manifests: []descriptor{{
		MediaType: m.MediaType, Digest: digest(mJSON), Size: int64(len(mJSON)),
		Platform: &platform{Architecture: *arch, OS: "linux"},
		Annotations: map[string]string{
			"org.opencontainers.image.ref.name": *version,
			"io.containerd.image.name":          *tag + ":" + *version,
		},
	}}}
	idxJSON, err := json.Marshal(idx)
	if err != nil {
		return err
	}

	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	files := []struct {
		name string
		body []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", idxJSON},
		{"blobs/sha256/" + strings.TrimPrefix(digest(cfgJSON), "sha256:"), cfgJSON},
		{"blobs/sha256/" + strings.TrimPrefix(digest(mJSON), "sha256:"), mJSON},
		{"blobs/sha256/" + strings.TrimPrefix(digest(layer), "sha256:"), layer},
	}
	for _, e := range files {
		if err := writeFile(tw, e.name, 0o644, e.body, epoch, 0); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("%s %s\n", *out, digest(mJSON))
	return nil
}

func writeFile(tw *tar.Writer, name string, mode int64, body []byte, t time.Time, uid int) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(body)), ModTime: t, Uid: uid, Gid: uid, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(body)
	return err
}

// rootLayer returns the gzipped layer and the digest of its uncompressed tar.
func rootLayer(exe []byte, t time.Time) (gz []byte, diffID string, err error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Name: name + "/", Mode: mode, ModTime: t, Uid: uid, Gid: uid, Typeflag: tar.TypeDir, Format: tar.FormatPAX})
	}
	for _, d := range []string{"etc", "usr", "usr/local", "usr/local/bin", "home"} {
		if err := dir(d, 0o755, 0); err != nil {
			return nil, "", err
		}
	}
	if err := dir("home/nonroot", 0o700, 65532); err != nil {
		return nil, "", err
	}
	if err := dir("tmp", 0o1777, 0); err != nil {
		return nil, "", err
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group := "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
	if err := writeFile(tw, "etc/passwd", 0o644, []byte(passwd), t, 0); err != nil {
		return nil, "", err
	}
	if err := writeFile(tw, "etc/group", 0o644, []byte(group), t, 0); err != nil {
		return nil, "", err
	}
	// The resource server is usually reached over TLS: carry the build
	// host's CA bundle when it has one.
	if ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		for _, d := range []string{"etc/ssl", "etc/ssl/certs"} {
			if err := dir(d, 0o755, 0); err != nil {
				return nil, "", err
			}
		}
		if err := writeFile(tw, "etc/ssl/certs/ca-certificates.crt", 0o644, ca, t, 0); err != nil {
			return nil, "", err
		}
	}
	if err := writeFile(tw, strings.TrimPrefix(entrypoint, "/"), 0o755, exe, t, 0); err != nil {
		return nil, "", err
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	var z bytes.Buffer
	zw, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		return nil, "", err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return z.Bytes(), digest(raw.Bytes()), nil
}

// extractCmd unpacks the image's layers into a directory, checking every
// digest on the way, and prints its config so a test can run the entrypoint.
func extractCmd(args []string) error {
	fs := flag.NewFlagSet("extract", flag.ContinueOnError)
	in := fs.String("i", "image.tar", "OCI layout tar")
	dest := fs.String("dir", "rootfs", "directory to unpack the root filesystem into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	blobs, err := readLayout(*in)
	if err != nil {
		return err
	}
	var idx index
	if err := json.Unmarshal(blobs["index.json"], &idx); err != nil || len(idx.Manifests) != 1 {
		return fmt.Errorf("index.json: want one manifest (%v)", err)
	}
	get := func(d descriptor) ([]byte, error) {
		b, ok := blobs["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok || digest(b) != d.Digest || int64(len(b)) != d.Size {
			return nil, fmt.Errorf("blob %s missing or not matching its digest and size", d.Digest)
		}
		return b, nil
	}
	mb, err := get(idx.Manifests[0])
	if err != nil {
		return err
	}
	var m manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return err
	}
	cb, err := get(m.Config)
	if err != nil {
		return err
	}
	var cfg imageConfig
	if err := json.Unmarshal(cb, &cfg); err != nil {
		return err
	}
	if len(cfg.RootFS.DiffIDs) != len(m.Layers) {
		return errors.New("config diff_ids and manifest layers differ in number")
	}
	for i, l := range m.Layers {
		lb, err := get(l)
		if err != nil {
			return err
		}
		zr, err := gzip.NewReader(bytes.NewReader(lb))
		if err != nil {
			return err
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			return err
		}
		if digest(raw) != cfg.RootFS.DiffIDs[i] {
			return fmt.Errorf("layer %d: diff_id mismatch", i)
		}
		if err := untar(raw, *dest); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(cfg)
}

func readLayout(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
	}
}

func untar(raw []byte, dest string) error {
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("layer entry %q leaves the root", h.Name)
		}
		p := filepath.Join(dest, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			body, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, body, os.FileMode(h.Mode)&0o777); err != nil {
				return err
			}
		}
	}
}
