package main

import (
	"regexp"

	"github.com/urfave/cli/v2"
)

// unexpanded matches a whole value that is still a bundle placeholder. Claude
// Desktop passes an optional user_config field the person left unset as the
// placeholder text itself, in arguments and environment alike.
var unexpanded = regexp.MustCompile(`^\$\{user_config\.[A-Za-z0-9_-]+\}$`)

// clearPlaceholders treats every string flag whose value is an unexpanded
// placeholder as given empty, which the flags read as unset: otherwise the
// text would become a relative --log-file or --cache-root named after it.
func clearPlaceholders(c *cli.Context) error {
	for _, f := range c.App.Flags {
		sf, ok := f.(*cli.StringFlag)
		if !ok || !unexpanded.MatchString(c.String(sf.Name)) {
			continue
		}
		if err := c.Set(sf.Name, ""); err != nil {
			return usageErrorf("--%s: %v", sf.Name, err)
		}
	}
	return nil
}
