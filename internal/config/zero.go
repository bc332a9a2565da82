package config

import (
	"fmt"

	"github.com/modelgate/modelgate/internal/server"
)

// ZeroConfig is the setup of a gateway started without a config file:
// Default, marked Zero, with the console on when the listener is loopback
// only (see ZeroConsole). Nobody signs up to it (there is no sign-in
// provider); the operator signs in with the one-time link the first start
// prints, or one from `modelgate admin login-link`.
func ZeroConfig() *Config {
	c := Default()
	c.Zero = true
	c.ZeroConsole()
	return c
}

// ZeroConsole turns the zero-config console on for a loopback listener
// and off for any other, and returns why it is off ("" when on). A
// console on another listener would need public_url (its links are made
// from the listen address, which is not what a browser elsewhere
// reaches) and a sign-in provider, which only a config file can give; so
// there it keeps today's behaviour: no console. serve calls it again
// after --listen changes the address. It does nothing to a config that
// is not Zero.
func (c *Config) ZeroConsole() (off string) {
	if !c.Zero {
		return ""
	}
	if !server.Loopback(c.Listen) {
		c.Console = nil
		return fmt.Sprintf("the console is off: listen %s is not a loopback address, and without a config file it is served on loopback only "+
			"(write a config file with a console: section and public_url to serve it there)", c.Listen)
	}
	if c.Console == nil {
		c.Console = &Console{}
		c.applyConsoleDefaults()
	}
	return ""
}
