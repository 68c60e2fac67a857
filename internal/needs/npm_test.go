package needs

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tarball returns an npm tarball (files under package/) and its
// integrity.
func tarball(t *testing.T, files map[string]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	sum := sha512.Sum512(buf.Bytes())
	return buf.Bytes(), "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// registry is an npm registry serving some tarballs, counting the
// tarball downloads.
type registry struct {
	*httptest.Server
	mu        sync.Mutex
	tarballs  map[string][]byte // by name@version
	integrity map[string]string
	fetched   map[string]int
}

func newRegistry(t *testing.T) *registry {
	r := &registry{tarballs: map[string][]byte{}, integrity: map[string]string{}, fetched: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if spec, ok := strings.CutPrefix(req.URL.Path, "/-/"); ok { // a tarball
			body, found := r.tarballs[strings.TrimSuffix(spec, ".tgz")]
			if !found {
				http.NotFound(w, req)
				return
			}
			r.fetched[strings.TrimSuffix(spec, ".tgz")]++
			_, _ = w.Write(body)
			return
		}
		name := strings.TrimPrefix(req.URL.Path, "/")
		versions := map[string]any{}
		latest := ""
		for spec := range r.tarballs {
			n, v, _ := strings.Cut(spec, "@")
			if n != name {
				continue
			}
			latest = v
			versions[v] = map[string]any{"name": n, "version": v, "dist": map[string]any{
				"tarball": r.URL + "/-/" + spec + ".tgz", "integrity": r.integrity[spec]}}
		}
		if latest == "" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"Not found"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"name": name, "dist-tags": map[string]string{"latest": latest}, "versions": versions})
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *registry) add(t *testing.T, name, version string, files map[string]string) Package {
	body, sum := tarball(t, files)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tarballs[name+"@"+version] = body
	r.integrity[name+"@"+version] = sum
	return Package{Name: name, Version: version, Integrity: sum}
}

func (r *registry) downloads(spec string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fetched[spec]
}

// npmAgainst points NPM at reg, with empty caches of its own and of npm's.
func npmAgainst(t *testing.T, reg *registry) (cache string) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		missing(t, "npm", "no npm on PATH", "install npm (it comes with Node.js)")
	}
	cache = t.TempDir()
	unfetched.Clear()
	t.Cleanup(unfetched.Clear)
	t.Setenv(EnvNPMCache, cache)
	t.Setenv("npm_config_registry", reg.URL+"/")
	t.Setenv("npm_config_cache", t.TempDir())
	return cache
}

func TestNPMFetchesOnceThenNeedsNeitherNPMNorTheRegistry(t *testing.T) {
	reg := newRegistry(t)
	cache := npmAgainst(t, reg)
	pkg := reg.add(t, "needs-selftest", "1.2.3", map[string]string{
		"package.json": `{"name":"needs-selftest","version":"1.2.3"}`,
		"index.js":     "module.exports = 42\n",
		"lib/deep.js":  "// deep\n",
	})

	dir := NPM(t, pkg)
	assert.Equal(t, "node_modules", filepath.Base(filepath.Dir(dir)))
	b, err := os.ReadFile(filepath.Join(dir, "index.js"))
	require.NoError(t, err)
	assert.Equal(t, "module.exports = 42\n", string(b))
	assert.FileExists(t, filepath.Join(dir, "lib", "deep.js"))
	assert.Equal(t, 1, reg.downloads("needs-selftest@1.2.3"))
	assert.FileExists(t, filepath.Join(cache, "needs-selftest@1.2.3.tgz"), "kept, keyed by name@version")

	// Each call gets a copy of its own: a test may change it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.js"), []byte("changed"), 0o600))
	dir2 := NPM(t, pkg)
	assert.NotEqual(t, dir, dir2)
	b, err = os.ReadFile(filepath.Join(dir2, "index.js"))
	require.NoError(t, err)
	assert.Equal(t, "module.exports = 42\n", string(b))
	assert.Equal(t, 1, reg.downloads("needs-selftest@1.2.3"), "the second call used the cache")

	// A second run: no registry, no npm.
	reg.Close()
	t.Setenv("PATH", t.TempDir())
	dir3 := NPM(t, pkg)
	assert.FileExists(t, filepath.Join(dir3, "index.js"))
}

func TestNPMRefetchesACorruptCache(t *testing.T) {
	reg := newRegistry(t)
	cache := npmAgainst(t, reg)
	pkg := reg.add(t, "needs-selftest", "1.0.0", map[string]string{"package.json": `{"name":"needs-selftest","version":"1.0.0"}`})
	NPM(t, pkg)
	tgz := filepath.Join(cache, "needs-selftest@1.0.0.tgz")
	b, err := os.ReadFile(tgz)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(tgz, b[:len(b)/2], 0o644)) // cut short
	NPM(t, pkg)
	assert.Equal(t, 2, reg.downloads("needs-selftest@1.0.0"))
	sum, err := integrity(tgz)
	require.NoError(t, err)
	assert.Equal(t, pkg.Integrity, sum)
}

func TestNPMRefusesWhatIsNotPinned(t *testing.T) {
	reg := newRegistry(t)
	npmAgainst(t, reg)
	good := reg.add(t, "needs-selftest", "1.0.0", map[string]string{"package.json": `{"name":"needs-selftest","version":"1.0.0"}`})
	withDeps := reg.add(t, "needs-deps", "1.0.0", map[string]string{"package.json": `{"name":"needs-deps","version":"1.0.0","dependencies":{"left-pad":"^1.3.0"}}`})
	for _, tc := range []struct {
		name string
		pkg  Package
		want string
	}{
		{"another tarball than pinned", Package{good.Name, good.Version, "sha512-" + base64.StdEncoding.EncodeToString(make([]byte, 64))}, "but needs-selftest@1.0.0 is pinned to sha512-AAAA"},
		{"a range, not a version", Package{good.Name, "1", good.Integrity}, "an exact version"},
		{"a tag, not a version", Package{good.Name, "latest", good.Integrity}, "an exact version"},
		{"no integrity", Package{good.Name, good.Version, ""}, "sha512 integrity"},
		{"a name that is a path", Package{"../x", good.Version, good.Integrity}, "want a name"},
		{"a version the registry lacks", Package{good.Name, "9.9.9", good.Integrity}, "the registry has no needs-selftest@9.9.9"},
		{"dependencies", withDeps, "has dependencies (map[left-pad:^1.3.0]), which needs.NPM does not install"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolateSkips(t)
			r := &recordingTB{TB: t}
			NPM(r, tc.pkg)
			assert.Empty(t, r.skips, "never a skip")
			require.NotEmpty(t, r.fatals)
			assert.Contains(t, r.fatals[0], tc.want)
		})
	}
}

func TestNPMSkipsWithoutNPMOrRegistryAndFailsUnderCI(t *testing.T) {
	reg := newRegistry(t)
	npmAgainst(t, reg)
	pkg := reg.add(t, "needs-selftest", "1.0.0", map[string]string{"package.json": `{"name":"needs-selftest","version":"1.0.0"}`})
	reg.Close()

	for _, ci := range []string{"", "true"} {
		t.Run("registry unreachable, CI="+ci, func(t *testing.T) {
			isolateSkips(t)
			unfetched.Clear()
			t.Setenv(EnvCI, ci)
			r := &recordingTB{TB: t}
			NPM(r, pkg)
			const want = "needs npm package needs-selftest@1.0.0: npm pack needs-selftest@1.0.0 failed (is the npm registry reachable?): code ECONNREFUSED"
			if ci == "true" {
				require.NotEmpty(t, r.fatals)
				assert.Contains(t, r.fatals[0], "CI=true: this test must run, but it "+want)
				assert.Empty(t, r.skips)
				return
			}
			require.NotEmpty(t, r.skips, "fatals: %v", r.fatals)
			assert.Contains(t, r.skips[0], want)
			assert.Contains(t, note("p"), "  1 needs npm package needs-selftest@1.0.0")

			// The next test that needs it is skipped at once, without
			// asking npm (there is none now) to wait for the registry again.
			t.Setenv("PATH", t.TempDir())
			r = &recordingTB{TB: t}
			NPM(r, pkg)
			require.NotEmpty(t, r.skips)
			assert.Contains(t, r.skips[0], want)
			assert.Contains(t, note("p"), "  2 need npm package needs-selftest@1.0.0")
		})
		t.Run("no npm, CI="+ci, func(t *testing.T) {
			isolateSkips(t)
			unfetched.Clear()
			t.Setenv(EnvCI, ci)
			t.Setenv("PATH", t.TempDir())
			r := &recordingTB{TB: t}
			NPM(r, pkg)
			if ci == "true" {
				require.NotEmpty(t, r.fatals)
				assert.Contains(t, r.fatals[0], "CI=true: this test must run, but it needs npm package needs-selftest@1.0.0: no npm on PATH")
				return
			}
			require.NotEmpty(t, r.skips)
			assert.Contains(t, r.skips[0], "no npm on PATH")
		})
	}
}

func TestExtractTarballStaysInItsDirectory(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "package/../../evil", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}))
	_, _ = tw.Write([]byte("x"))
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	path := filepath.Join(t.TempDir(), "x.tgz")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	dir := filepath.Join(t.TempDir(), "a", "b")
	err := extractTarball(path, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "outside the package")
	assert.NoFileExists(t, filepath.Join(dir, "..", "..", "evil"))
}

// The pinned axe-core is the one the registry publishes under that
// version and integrity (it needs the registry, or the cache).
func TestAxeCorePinIsExact(t *testing.T) {
	dir := NPM(t, AxeCore)
	assert.FileExists(t, filepath.Join(dir, "axe.min.js"))
}
