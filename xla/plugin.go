package xla

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gomlx/compute"
	gomlxxla "github.com/gomlx/go-xla/compute/xla"
	"github.com/gomlx/go-xla/pjrt"
)

// EnvPython names the Python interpreter whose site-packages are searched for JAX's CUDA PJRT plugin
// (default: python3, then python, on PATH).
const EnvPython = "FITS_PYTHON"

// jaxCUDAPluginGlob is where pip installs the CUDA PJRT plugin of JAX (the jax-cuda12-pjrt and
// jax-cuda13-pjrt wheels), relative to a site-packages folder. The NVIDIA libraries it loads lie in
// site-packages/nvidia/*/lib, which the plugin's RPATH names ($ORIGIN/../../nvidia/...).
const jaxCUDAPluginGlob = "jax_plugins/xla_cuda*/xla_cuda_plugin.so"

// sitePackagesScript prints the site-packages folders of a Python interpreter, one per line.
const sitePackagesScript = `import site, sysconfig
paths = []
try:
    paths += site.getsitepackages()
except Exception:
    pass
try:
    paths.append(site.getusersitepackages())
except Exception:
    pass
for key in ("purelib", "platlib"):
    paths.append(sysconfig.get_paths()[key])
print("\n".join(paths))
`

// JAXCUDAPlugin is a CUDA PJRT plugin installed by pip for JAX.
type JAXCUDAPlugin struct {
	// Path is the plugin's shared library, e.g. <site-packages>/jax_plugins/xla_cuda13/xla_cuda_plugin.so.
	Path string
	// Python is the interpreter whose site-packages hold it.
	Python string
}

var (
	jaxOnce    sync.Once
	jaxPlugins []JAXCUDAPlugin
)

// JAXCUDAPlugins returns the CUDA PJRT plugins of the JAX installed for the Python interpreter named by
// $FITS_PYTHON, or else for python3 and python on PATH: the files matching
// site-packages/jax_plugins/xla_cuda*/xla_cuda_plugin.so, the newest CUDA first (xla_cuda13 before
// xla_cuda12). The interpreter runs once per process, for at most 10 seconds; none found is an empty list.
func JAXCUDAPlugins() []JAXCUDAPlugin {
	jaxOnce.Do(func() { jaxPlugins = findJAXCUDAPlugins() })
	return jaxPlugins
}

// findJAXCUDAPlugins is JAXCUDAPlugins without the cache.
func findJAXCUDAPlugins() []JAXCUDAPlugin {
	pythons := []string{"python3", "python"}
	if p := os.Getenv(EnvPython); p != "" {
		pythons = []string{p}
	}
	var found []JAXCUDAPlugin
	seen := map[string]bool{}
	for _, py := range pythons {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		for _, site := range sitePackages(path) {
			matches, _ := filepath.Glob(filepath.Join(site, jaxCUDAPluginGlob))
			slices.Sort(matches)
			slices.Reverse(matches) // xla_cuda13 before xla_cuda12
			for _, m := range matches {
				if real, err := filepath.EvalSymlinks(m); err == nil && !seen[real] {
					seen[real] = true
					found = append(found, JAXCUDAPlugin{Path: m, Python: path})
				}
			}
		}
		if len(found) > 0 {
			break
		}
	}
	return found
}

// sitePackages returns the site-packages folders of the interpreter python (none when it fails).
func sitePackages(python string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", sitePackagesScript).Output()
	if err != nil {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line = strings.TrimSpace(line); line != "" && !slices.Contains(dirs, line) {
			dirs = append(dirs, line)
		}
	}
	return dirs
}

// resolveCUDA turns the configuration "xla:cuda[,options]" into "xla:<JAX's plugin>[,options]" when
// go-xla finds no plugin named cuda but pip installed one for JAX; other configurations are returned as
// they are.
func resolveCUDA(config string) string {
	name, opts, _ := strings.Cut(config, ":")
	plugin, rest, _ := strings.Cut(opts, ",")
	if name != "xla" || plugin != "cuda" {
		return config
	}
	if _, ok := Plugins()["cuda"]; ok {
		return config
	}
	jax := JAXCUDAPlugins()
	if len(jax) == 0 {
		return config
	}
	out := "xla:" + jax[0].Path
	if rest != "" {
		out += "," + rest
	}
	return out
}

// PluginInfo describes the PJRT plugin a backend loaded.
type PluginInfo struct {
	// Path is the plugin's shared library.
	Path string
	// APIMajor and APIMinor are the PJRT C API version the plugin reports (go-xla v0.4.13 is built
	// against 0.104 and loads newer minors of major 0).
	APIMajor, APIMinor int
}

// API returns the PJRT C API version as "major.minor".
func (p PluginInfo) API() string { return fmt.Sprintf("%d.%d", p.APIMajor, p.APIMinor) }

// ShortPath returns the plugin's file with at most its two parent folders ("go-xla/pjrt_c_api_cpu_plugin.so",
// "jax_plugins/xla_cuda13/xla_cuda_plugin.so"): the plugin named without this machine's absolute path, for
// result files.
func (p PluginInfo) ShortPath() string {
	parts := strings.Split(filepath.ToSlash(p.Path), "/")
	if len(parts) > 3 {
		parts = parts[len(parts)-3:]
	}
	return strings.Join(parts, "/")
}

// LoadedPlugin returns the PJRT plugin of an XLA backend; false for other backends (SimpleGo).
func LoadedPlugin(b compute.Backend) (PluginInfo, bool) {
	xb, ok := b.(*gomlxxla.Backend)
	if !ok {
		return PluginInfo{}, false
	}
	p, err := pjrt.GetPlugin(xb.PluginName()) // the loaded plugin, cached by go-xla
	if err != nil {
		return PluginInfo{}, false
	}
	major, minor := p.Version()
	return PluginInfo{Path: p.Path(), APIMajor: major, APIMinor: minor}, true
}

// nvidiaDataDir returns the folder XLA's --xla_gpu_cuda_data_dir should name for a CUDA plugin file (the
// CUDA toolkit's ptxas and libdevice): the nvidia/ folder beside the plugin's folder (this toolkit's
// layout, ~/.local/lib/go-xla and ~/.local/lib/nvidia) or beside its parent (pip's layout,
// site-packages/jax_plugins/xla_cuda13 and site-packages/nvidia), and in it cu13/ (CUDA 13 wheels),
// cuda_nvcc/ (CUDA 12 wheels) or itself; "" when there is none.
func nvidiaDataDir(plugin string) string {
	dir := filepath.Dir(plugin)
	for _, base := range []string{filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
		nvidia := filepath.Join(base, "nvidia")
		if !isDir(nvidia) {
			continue
		}
		for _, sub := range []string{"cu13", "cuda_nvcc"} {
			if d := filepath.Join(nvidia, sub); isDir(d) {
				return d
			}
		}
		return nvidia
	}
	return ""
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// Float32Products turns off TF32 in the dense products of an XLA backend (go-xla turns it on for CUDA:
// float32 products with 10-bit mantissas) for the graphs built until restore is called, so that a check
// against float32 tolerances sees float32 arithmetic. wasOn reports whether TF32 was on. Other backends
// are left as they are.
func Float32Products(b compute.Backend) (restore func(), wasOn bool) {
	xb, ok := b.(*gomlxxla.Backend)
	if !ok || !xb.DotGeneralUseTF32 {
		return func() {}, false
	}
	xb.DotGeneralUseTF32 = false
	return func() { xb.DotGeneralUseTF32 = true }, true
}
