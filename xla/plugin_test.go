package xla

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sitePackagesOf returns the purelib folder of a Python interpreter.
func sitePackagesOf(t *testing.T, python string) string {
	t.Helper()
	out, err := exec.Command(python, "-c", `import sysconfig; print(sysconfig.get_paths()["purelib"])`).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestJAXCUDAPluginsInAVirtualenv installs pip's layout of JAX's CUDA plugins (jax_plugins/xla_cuda12 and
// xla_cuda13, nvidia/cu13) into a fresh virtual environment and finds them through $FITS_PYTHON, the newest
// CUDA first; "xla:cuda" then resolves to that plugin's path with its options kept, and the CUDA data
// folder is the environment's nvidia/cu13.
func TestJAXCUDAPluginsInAVirtualenv(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(python, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("python3 -m venv: %v: %s", err, out)
	}
	venvPython := filepath.Join(venv, "bin", "python")
	site := sitePackagesOf(t, venvPython)
	var plugins []string
	for _, d := range []string{"xla_cuda12", "xla_cuda13"} {
		p := filepath.Join(site, "jax_plugins", d, "xla_cuda_plugin.so")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not loaded by this test"), 0o644); err != nil {
			t.Fatal(err)
		}
		plugins = append(plugins, p)
	}
	if err := os.MkdirAll(filepath.Join(site, "nvidia", "cu13", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPython, venvPython)
	found := findJAXCUDAPlugins()
	if len(found) != 2 || found[0].Path != plugins[1] || found[1].Path != plugins[0] {
		t.Fatalf("found %+v, want %s then %s", found, plugins[1], plugins[0])
	}
	if found[0].Python != venvPython {
		t.Errorf("python %q, want %q", found[0].Python, venvPython)
	}
	if got, want := nvidiaDataDir(found[0].Path), filepath.Join(site, "nvidia", "cu13"); got != want {
		t.Errorf("CUDA data folder %q, want %q", got, want)
	}
	if _, ok := Plugins()["cuda"]; ok {
		t.Skip("a go-xla CUDA plugin is installed: xla:cuda names it, not JAX's")
	}
	jaxOnce.Do(func() { jaxPlugins = found }) // as the first call of JAXCUDAPlugins would find them
	if jaxPlugins[0].Path != found[0].Path {
		t.Skip("JAXCUDAPlugins already ran in this process")
	}
	for config, want := range map[string]string{
		"xla:cuda":            "xla:" + plugins[1],
		"xla:cuda,tf32=false": "xla:" + plugins[1] + ",tf32=false",
		"xla:cpu":             "xla:cpu",
		SimpleGoConfig:        SimpleGoConfig,
	} {
		if got := resolveCUDA(config); got != want {
			t.Errorf("resolveCUDA(%q) = %q, want %q", config, got, want)
		}
	}
}

// TestNVIDIADataDirOfTheSetupLayout: make setup copies the plugin to <lib>/go-xla/ and links <lib>/nvidia to
// the wheels' nvidia/ folder; CUDA 12 wheels hold the toolkit in cuda_nvcc/.
func TestNVIDIADataDirOfTheSetupLayout(t *testing.T) {
	lib := t.TempDir()
	plugin := filepath.Join(lib, "go-xla", "pjrt_c_api_cuda_plugin.so")
	if got := nvidiaDataDir(plugin); got != "" {
		t.Errorf("no nvidia folder: got %q", got)
	}
	if err := os.MkdirAll(filepath.Join(lib, "nvidia", "cuda_nvcc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := nvidiaDataDir(plugin), filepath.Join(lib, "nvidia", "cuda_nvcc"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLoadedPluginReportsItsAPI: the XLA CPU backend names the plugin file it loaded and its PJRT C API
// version (major 0, minor at least go-xla's 104); SimpleGo has none.
func TestLoadedPluginReportsItsAPI(t *testing.T) {
	for _, config := range availableConfigs(t) {
		b, err := New(config)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := LoadedPlugin(b)
		if config == SimpleGoConfig {
			if ok {
				t.Errorf("SimpleGo reports plugin %+v", p)
			}
			continue
		}
		if !ok || !filepath.IsAbs(p.Path) || p.APIMajor != 0 || p.APIMinor < 104 {
			t.Errorf("%s: plugin %+v (ok %v)", config, p, ok)
		}
		if st, err := os.Stat(p.Path); err != nil || st.IsDir() {
			t.Errorf("%s: plugin file %s: %v", config, p.Path, err)
		}
		if short := p.ShortPath(); strings.HasPrefix(short, "/") || !strings.HasSuffix(p.Path, short) {
			t.Errorf("short path %q of %q", short, p.Path)
		}
	}
}
