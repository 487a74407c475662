// Package xla chooses and caches the GoMLX backend that the toolkit computes on: the XLA CUDA PJRT plugin
// when an NVIDIA GPU and the plugin are present, else the XLA CPU PJRT plugin, else SimpleGo (the pure-Go
// backend) in its sequential configuration, which does not deadlock on small machines.
//
// The GOMLX_BACKEND environment variable, or an explicit configuration from the CLI flag --backend, always
// wins over the automatic choice. Auto-installation of plugins (which downloads from GitHub) is disabled, and
// go-xla's auto-installer is not linked in:
// plugins are installed by `make setup` from pinned PyPI wheels into ~/.local/lib/go-xla, or found through
// PJRT_PLUGIN_LIBRARY_PATH, or (CUDA) where pip installed JAX's CUDA plugin (JAXCUDAPlugins).
package xla

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // registers the "go" backend

	// The XLA backend without its auto-installer (package autoinstall, not imported): nothing here can
	// download a plugin.
	gomlxxla "github.com/gomlx/go-xla/compute/xla"
	"github.com/gomlx/go-xla/pjrt"
)

// SimpleGoConfig is the SimpleGo configuration used when no XLA plugin is usable. SimpleGo's default parallel
// executor was seen to hang after a few executions on a 2-core machine; the sequential one does not.
const SimpleGoConfig = "go:ops_sequential"

// EnvBackend is the environment variable GoMLX reads for its backend configuration, e.g. "xla:cpu",
// "xla:cuda", "xla:/abs/path/pjrt_c_api_cpu_plugin.so" or "go:ops_sequential".
const EnvBackend = "GOMLX_BACKEND"

func init() {
	// Never reach for GitHub: plugins come from `make setup`. Child processes (notebook kernels, tests that
	// run the CLI) inherit the setting.
	gomlxxla.EnableAutoInstall(false)
	if _, ok := os.LookupEnv(gomlxxla.NoAutoInstallEnv); !ok {
		_ = os.Setenv(gomlxxla.NoAutoInstallEnv, "1")
	}
}

// Choice is a backend configuration and why it was chosen.
type Choice struct {
	// Config is the GoMLX backend configuration, "<backend>:<options>", e.g. "xla:cpu".
	Config string
	// Reason says in words why this configuration was chosen.
	Reason string
}

// Plugins returns the PJRT plugins found on this machine, by name ("cpu", "cuda", ...) to the path of the
// shared library. The search follows go-xla: PJRT_PLUGIN_LIBRARY_PATH, ~/.local/lib/go-xla,
// /usr/local/lib/go-xla and the system library paths.
func Plugins() map[string]string {
	return pjrt.AvailablePlugins()
}

// HasNVIDIAGPU reports whether NVIDIA device files exist (/dev/nvidia0, /dev/nvidiactl, ...).
func HasNVIDIAGPU() bool {
	matches, _ := filepath.Glob("/dev/nvidia[0-9]*")
	return len(matches) > 0
}

// Choose returns the backend configuration to use, without creating it. An explicit non-empty config wins,
// then $GOMLX_BACKEND, then XLA CUDA (an NVIDIA device and a plugin: go-xla's, else JAX's from
// site-packages, named by its path), then XLA CPU (plugin present), then SimpleGo.
func Choose(explicit string) Choice {
	if explicit != "" {
		return Choice{Config: explicit, Reason: "requested with --backend"}
	}
	if env, ok := os.LookupEnv(EnvBackend); ok && env != "" {
		return Choice{Config: env, Reason: "from $" + EnvBackend}
	}
	plugins := Plugins()
	if p, ok := plugins["cuda"]; ok && HasNVIDIAGPU() {
		return Choice{Config: "xla:cuda", Reason: "XLA CUDA PJRT plugin " + p + " and an NVIDIA GPU"}
	}
	if HasNVIDIAGPU() {
		if jax := JAXCUDAPlugins(); len(jax) > 0 {
			return Choice{Config: "xla:" + jax[0].Path, Reason: "JAX's CUDA PJRT plugin (site-packages of " + jax[0].Python + ") and an NVIDIA GPU"}
		}
	}
	if p, ok := plugins["cpu"]; ok {
		return Choice{Config: "xla:cpu", Reason: "XLA CPU PJRT plugin " + p}
	}
	return Choice{Config: SimpleGoConfig, Reason: "no XLA PJRT plugin found (run `make setup`); pure-Go SimpleGo backend"}
}

// New creates the backend for a configuration. "xla:cuda" loads JAX's CUDA plugin from site-packages when
// go-xla finds no plugin named cuda. For CUDA plugins it points XLA at the NVIDIA toolkit installed beside
// the plugin (see prepareCUDA) before loading it.
func New(config string) (b compute.Backend, err error) {
	config = resolveCUDA(config)
	name, opts, _ := strings.Cut(config, ":")
	if (name == "xla" || name == "stablehlo") && strings.Contains(strings.ToLower(opts), "cuda") {
		prepareCUDA(opts)
	}
	defer func() {
		if r := recover(); r != nil { // GoMLX panics on an unknown backend name
			err = fmt.Errorf("%v", r)
		}
		if err != nil {
			b, err = nil, fmt.Errorf("backend %q: %w", config, err)
		}
	}()
	return compute.NewWithConfig(config)
}

// prepareCUDA sets --xla_gpu_cuda_data_dir in XLA_FLAGS to the NVIDIA toolkit installed beside the CUDA
// plugin (nvidiaDataDir), unless the user set it already. go-xla would otherwise point it at a directory
// that exists only on its author's machine.
func prepareCUDA(opts string) {
	flags := os.Getenv("XLA_FLAGS")
	if strings.Contains(flags, "--xla_gpu_cuda_data_dir") {
		return
	}
	plugin := strings.SplitN(opts, ",", 2)[0]
	if !filepath.IsAbs(plugin) {
		plugin = Plugins()[plugin]
	}
	if plugin == "" {
		return
	}
	if dataDir := nvidiaDataDir(plugin); dataDir != "" {
		_ = os.Setenv("XLA_FLAGS", strings.TrimSpace(flags+" --xla_gpu_cuda_data_dir="+dataDir))
		// go-xla looks for nvidia/ beside the plugin's folder only and warns when it is not there (pip's
		// layout has it one level up): this sets what its check would.
		if _, ok := os.LookupEnv("GOPJRT_CUDA_CHECKS"); !ok {
			_ = os.Setenv("GOPJRT_CUDA_CHECKS", "0")
		}
	}
}

var (
	mu          sync.Mutex
	explicitCfg string
	current     compute.Backend
	currentCfg  Choice
	announce    io.Writer = os.Stderr
)

// SetConfig sets the configuration that Backend will use (the CLI's --backend flag); "" means automatic.
// It must be called before the first call to Backend; later calls return an error.
func SetConfig(config string) error {
	mu.Lock()
	defer mu.Unlock()
	if current != nil && config != "" && config != currentCfg.Config {
		return fmt.Errorf("backend already created as %q; cannot switch to %q", currentCfg.Config, config)
	}
	explicitCfg = config
	return nil
}

// SetAnnounceWriter sets where Backend prints its one-line announcement of the chosen backend (default
// os.Stderr; nil silences it).
func SetAnnounceWriter(w io.Writer) {
	mu.Lock()
	defer mu.Unlock()
	announce = w
}

// HoldAnnouncement keeps Backend's announcement back until release is called: release(true) prints what
// was held where it would have gone, release(false) drops it. A command holds it while it checks that the
// backend can run what was asked, so that a refusal is its one line on stderr.
func HoldAnnouncement() (release func(print bool)) {
	mu.Lock()
	defer mu.Unlock()
	prev := announce
	if prev == nil {
		return func(bool) {}
	}
	var held bytes.Buffer
	announce = &held
	return func(print bool) {
		mu.Lock()
		defer mu.Unlock()
		if announce == &held {
			announce = prev
		}
		if print {
			_, _ = prev.Write(held.Bytes())
		}
	}
}

// Backend returns the process-wide backend, creating it on the first call and printing the choice once.
// When the automatic choice is an XLA plugin that fails to load, it falls back to the next candidate and
// says so.
func Backend() (compute.Backend, error) {
	mu.Lock()
	defer mu.Unlock()
	if current != nil {
		return current, nil
	}
	choice := Choose(explicitCfg)
	b, err := New(choice.Config)
	if err != nil && explicitCfg == "" && os.Getenv(EnvBackend) == "" {
		// Automatic choice failed: try the remaining candidates in order.
		for _, fallback := range []string{"xla:cpu", SimpleGoConfig} {
			if _, ok := Plugins()["cpu"]; fallback == choice.Config || fallback == "xla:cpu" && !ok {
				continue
			}
			if b2, err2 := New(fallback); err2 == nil {
				choice = Choice{Config: fallback, Reason: fmt.Sprintf("fallback after %s failed: %v", choice.Config, err)}
				b, err = b2, nil
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	current, currentCfg = b, choice
	if announce != nil {
		fmt.Fprintf(announce, "fits: backend %s (%s)\n", choice.Config, choice.Reason)
		if p, ok := LoadedPlugin(b); ok {
			fmt.Fprintf(announce, "fits: PJRT plugin %s, PJRT C API %s\n", p.Path, p.API())
		}
	}
	return current, nil
}

// Current returns the configuration of the backend created by Backend, or an empty Choice if none was
// created yet.
func Current() Choice {
	mu.Lock()
	defer mu.Unlock()
	return currentCfg
}
