package theory_test

import (
	"fmt"

	"github.com/fits-snn/fits/fits/theory"
)

// The closed-form inverse of Theorem 1 (Eq. 5) and its round trip: the adaptation strength κ = ηγ that puts
// the FS module's magnitude peak at f* = 12 Hz with the SHD/SSC constants (τm = 0.04 s, τa = 0.2 s,
// Δt = 4 ms), and the target that κ realizes; then the stability limit of the semi-implicit update (Appendix
// A.2) and what the discrete-time update realizes at 12 Hz (Theorem 2).
func ExampleConstants_KappaForTargetHz() {
	c := theory.SSC
	kappa, err := c.KappaForTargetHz(12)
	if err != nil {
		fmt.Println(err)
		return
	}
	f, _ := c.TargetHz(kappa)
	fmt.Printf("κ = %.1f 1/s², back to f* = %.6f Hz\n", kappa, f)
	fmt.Printf("stable up to %.1f Hz (semi-implicit), %.1f Hz (explicit)\n",
		c.Jury().FStarMaxSemiImplicitHz, c.Jury().FStarMaxExplicitHz)
	dt, _ := c.DTTargetHz(kappa)
	fmt.Printf("the discrete update peaks at %.2f Hz\n", dt)
	// Output:
	// κ = 5561.9 1/s², back to f* = 12.000000 Hz
	// stable up to 77.2 Hz (semi-implicit), 13.8 Hz (explicit)
	// the discrete update peaks at 12.43 Hz
}
