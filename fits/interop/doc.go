// Package interop moves trained networks between this toolkit and the authors' released PyTorch code
// (kaistmm/FiTS): it reads a released run folder (best.pth, a torch.save of {"epoch", "state", "config",
// "valid_acc", "test_acc"}, with config.json and metrics.json beside it) into a run folder of this toolkit,
// and writes a run of this toolkit in the released layout. The mapping of configuration keys and tensors,
// and what is refused, is documented in docs/interop.md.
package interop
