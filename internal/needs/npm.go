package needs

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Package is an npm package pinned to an exact version and to the
// integrity the registry publishes for its tarball (npm view
// NAME@VERSION dist.integrity).
type Package struct {
	Name      string // "axe-core", "@cryptapi/api"
	Version   string // exact: "4.14.1"
	Integrity string // "sha512-…"
}

func (p Package) String() string { return p.Name + "@" + p.Version }

// EnvNPMCache names the environment variable holding the directory where
// NPM keeps the tarballs it fetched (default: the user's cache directory,
// cryptapi-go/npm in it).
const EnvNPMCache = "CRYPTAPI_NPM_CACHE"

var (
	npmName    = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$`)
	npmVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
)

// NPM returns the directory of a fresh copy of package p, of its own to
// the test (named node_modules/NAME in a temporary directory, so that
// NODE_PATH can point at its parent). Its tarball comes from the cache
// directory (EnvNPMCache), keyed by name@version and checked against
// p.Integrity at each use; only when the cache lacks it is it fetched,
// with "npm pack" (npm's own registry settings apply), checked, and kept:
// a second run needs neither npm nor the registry.
//
// Without npm, or when the registry cannot be reached, the test is
// skipped (it fails under CI=true). A tarball that does not match
// p.Integrity, a version that is not exact, a version the registry does
// not have, and a package with dependencies (which this does not
// install; pin them too) fail the test everywhere.
func NPM(tb testing.TB, p Package) string {
	tb.Helper()
	if !npmName.MatchString(p.Name) || !npmVersion.MatchString(p.Version) || !strings.HasPrefix(p.Integrity, "sha512-") {
		tb.Fatalf("npm package %q: want a name, an exact version (1.2.3) and its sha512 integrity", p)
		return ""
	}
	tgz, err := npmTarball(p)
	var unavailable *npmUnavailable
	if errors.As(err, &unavailable) {
		missing(tb, "npm package "+p.String(), unavailable.why, unavailable.how)
		return ""
	}
	if err != nil {
		tb.Fatalf("npm package %s: %v", p, err)
		return ""
	}
	dir := filepath.Join(tb.TempDir(), "node_modules", filepath.FromSlash(p.Name))
	if err := extractTarball(tgz, dir); err != nil {
		tb.Fatalf("npm package %s: %v", p, err)
		return ""
	}
	var manifest struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &manifest)
	}
	switch {
	case err != nil:
		tb.Fatalf("npm package %s: package.json: %v", p, err)
	case manifest.Version != p.Version:
		tb.Fatalf("npm package %s: its package.json says version %q", p, manifest.Version)
	case len(manifest.Dependencies) > 0:
		tb.Fatalf("npm package %s has dependencies (%v), which needs.NPM does not install: pin each of them too", p, manifest.Dependencies)
	}
	return dir
}

// npmUnavailable is a package that could not be fetched for want of npm
// or of the registry.
type npmUnavailable struct{ why, how string }

func (e *npmUnavailable) Error() string { return e.why }

// npmCacheDir returns the directory NPM keeps tarballs in.
func npmCacheDir() (string, error) {
	if d := os.Getenv(EnvNPMCache); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set %s): %w", EnvNPMCache, err)
	}
	return filepath.Join(d, "cryptapi-go", "npm"), nil
}

// unfetched remembers, by name@version, the packages npm could not fetch
// in this process: the next test that needs one is skipped at once
// instead of waiting for the registry again.
var unfetched sync.Map

// npmTarball returns the path of p's tarball in the cache, fetching it
// when the cache has no tarball matching p.Integrity.
func npmTarball(p Package) (string, error) {
	path, err := fetchTarball(p)
	if err != nil {
		var unavailable *npmUnavailable
		if errors.As(err, &unavailable) {
			unfetched.Store(p.String(), unavailable)
		}
	}
	return path, err
}

func fetchTarball(p Package) (string, error) {
	cache, err := npmCacheDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(cache, filepath.FromSlash(p.Name)+"@"+p.Version+".tgz")
	if sum, err := integrity(path); err == nil && sum == p.Integrity {
		return path, nil
	}
	// Absent, or not what was pinned (a partial or altered file): fetch.
	if e, ok := unfetched.Load(p.String()); ok {
		return "", e.(*npmUnavailable)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", &npmUnavailable{
			why: "no npm on PATH, and " + cache + " does not hold it",
			how: "install npm (it comes with Node.js) and run the tests once with the registry reachable; the package is then kept in " + cache,
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "pack", p.String(), "--pack-destination", tmp, "--ignore-scripts")
	cmd.Dir = tmp
	cmd.Env = npmEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		text := strings.TrimSpace(out.String())
		if strings.Contains(text, "E404") || strings.Contains(text, "ETARGET") || strings.Contains(text, "No matching version") {
			return "", fmt.Errorf("the registry has no %s: %s", p, npmSaid(text))
		}
		return "", &npmUnavailable{
			why: fmt.Sprintf("npm pack %s failed (is the npm registry reachable?): %s", p, npmSaid(text)),
			how: "run the tests once with the npm registry reachable; the package is then kept in " + cache,
		}
	}
	got, err := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if err != nil || len(got) != 1 {
		return "", fmt.Errorf("npm pack %s left %d tarballs: %s", p, len(got), npmSaid(out.String()))
	}
	sum, err := integrity(got[0])
	if err != nil {
		return "", err
	}
	if sum != p.Integrity {
		return "", fmt.Errorf("the tarball npm fetched has integrity %s, but %s is pinned to %s", sum, p, p.Integrity)
	}
	if err := os.Rename(got[0], path); err != nil {
		return "", err
	}
	return path, nil
}

// npmEnv is the environment npm runs in: the test's, with npm's notices
// off and, unless set, bounded waits for an unreachable registry.
func npmEnv() []string {
	env := os.Environ()
	for k, v := range map[string]string{
		"npm_config_update_notifier":        "false",
		"npm_config_fund":                   "false",
		"npm_config_audit":                  "false",
		"npm_config_loglevel":               "error",
		"npm_config_fetch_retries":          "1",
		"npm_config_fetch_retry_mintimeout": "1000",
		"npm_config_fetch_retry_maxtimeout": "5000",
		"npm_config_fetch_timeout":          "30000",
	} {
		if _, set := os.LookupEnv(k); !set {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// npmSaid returns the gist of npm's error output: its first two error
// lines that are not a stack trace, a field dump or advice.
func npmSaid(out string) string {
	var said []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		msg, ok := strings.CutPrefix(line, "npm error ")
		switch {
		case !ok, msg == "", strings.HasPrefix(msg, " "), strings.HasPrefix(msg, "at "),
			strings.HasPrefix(msg, "syscall "), strings.HasPrefix(msg, "errno "),
			strings.Contains(msg, "complete log"), strings.Contains(msg, "behind a proxy"),
			strings.Contains(msg, "In most cases"):
			continue
		}
		said = append(said, msg)
		if len(said) == 2 {
			break
		}
	}
	if len(said) == 0 {
		return strings.TrimSpace(out)
	}
	return strings.Join(said, "; ")
}

// integrity returns the file's integrity in npm's form, sha512-BASE64.
func integrity(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha512.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha512-" + base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// extractTarball writes the regular files of an npm tarball into dir,
// without the tarball's top directory ("package/"). Links and other
// special entries are left out; a path that would leave dir fails.
func extractTarball(tgz, dir string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", tgz, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", tgz, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		_, rel, ok := strings.Cut(filepath.ToSlash(h.Name), "/")
		if !ok || !filepath.IsLocal(rel) {
			return fmt.Errorf("%s: entry %q is outside the package", tgz, h.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if h.Mode&0o111 != 0 {
			mode = 0o755
		}
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}
