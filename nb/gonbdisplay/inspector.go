package gonbdisplay

import (
	"fmt"
	"os"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/nb"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/widgets"
)

// NeuronInspector shows notebook 13's interactive inspector of run r in JupyterLab: a layer selector and a
// neuron slider, starting at the neuron whose f* moved furthest in the last hidden layer, that redraw the
// neuron's parameter table and figures (nb.Inspector.Neuron, its spikes on the first `examples` test
// examples). It runs until the cell is stopped, and returns the first error met. Widgets wait for a browser:
// in a headless run (FITS_HEADLESS set, as the headless notebook runner sets it) it says so and returns at
// once, as it does without a run (r nil).
func NeuronInspector(r *analysis.Run, examples int) error {
	if os.Getenv("FITS_HEADLESS") != "" {
		Markdown("*Headless run (`FITS_HEADLESS` is set): the interactive inspector needs a browser and is skipped. Open this notebook in JupyterLab (`make lab`).*")
		return nil
	}
	if r == nil {
		Markdown("*No run to inspect yet: train it first (the commands are above), or set `FITS_INSPECT_RUN`.*")
		return nil
	}
	in, err := nb.NewInspector(r, examples)
	if err != nil {
		return err
	}
	names := make([]string, len(in.Layers))
	for i := range in.Layers {
		names[i] = fmt.Sprintf("hidden layer %d", i+1)
	}
	li, n := in.MostShifted()
	sel := widgets.Select(names).SetDefault(li).Done()
	slider := widgets.Slider(0, in.Layers[li].Neurons-1, n).Done()
	tableID, bodeID, rasterID := gonbui.UniqueId(), gonbui.UniqueId(), gonbui.UniqueId()
	redraw := func() error {
		out, err := in.Neuron(li, n)
		if err != nil {
			return err
		}
		gonbui.UpdateHTML(tableID, out.Tables[0].HTML())
		for i, id := range []string{bodeID, rasterID} {
			if i < len(out.Figures) {
				if err := UpdateFigure(id, out.Figures[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := redraw(); err != nil {
		return err
	}
	layerC, neuronC := sel.Listen().LatestOnly(), slider.Listen().LatestOnly()
	for {
		select {
		case v := <-layerC.C:
			li = v
			n = min(n, in.Layers[li].Neurons-1)
		case v := <-neuronC.C:
			n = min(v, in.Layers[li].Neurons-1)
		}
		if err := redraw(); err != nil {
			return err
		}
	}
}
