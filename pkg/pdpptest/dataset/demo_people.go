package dataset

import "strings"

// The demo belongs to Nora Castellanos, a product designer at Tidewater Labs in
// Portland. The same people appear in her mail, chat and calendar, and her bank
// feed pays the merchants her receipts come from.

type person struct {
	name  string
	email string
}

func (p person) first() string {
	first, _, _ := strings.Cut(p.name, " ")
	return first
}

var (
	ownerPersonal = person{"Nora Castellanos", "nora.castellanos@mailbox.example"}
	ownerWork     = person{"Nora Castellanos", "nora@tidewaterlabs.example"}
)

// coworkers at Tidewater Labs; the first entries are the people Nora works with most.
var coworkers = []person{
	{"Dev Malhotra", "dev.malhotra@tidewaterlabs.example"},
	{"Grace Oyelaran", "grace.oyelaran@tidewaterlabs.example"},
	{"Hannah Kowalczyk", "hannah.kowalczyk@tidewaterlabs.example"},
	{"Tomás Whitfield", "tomas.whitfield@tidewaterlabs.example"},
	{"Yuki Tanabe", "yuki.tanabe@tidewaterlabs.example"},
	{"Ines Carvalho", "ines.carvalho@tidewaterlabs.example"},
	{"Marcus Bell", "marcus.bell@tidewaterlabs.example"},
	{"Leila Haddad", "leila.haddad@tidewaterlabs.example"},
	{"Felix Ambrose", "felix.ambrose@tidewaterlabs.example"},
	{"Sam Okonkwo", "sam.okonkwo@tidewaterlabs.example"},
	{"Owen Brandt", "owen.brandt@tidewaterlabs.example"},
	{"Rachel Stein", "rachel.stein@tidewaterlabs.example"},
}

// clients are the external people on work threads, one per customer account.
var clients = []person{
	{"Amara Nwosu", "amara.nwosu@harborviewhealth.example"},
	{"Peter Lindgren", "peter.lindgren@cedarpine.example"},
	{"Julia Brennan", "julia.brennan@bluefinlogistics.example"},
	{"Marco Ruiz", "marco.ruiz@meridianschools.example"},
}

// friends and family write to the personal mailbox.
var friends = []person{
	{"Priya Raman", "priya.raman@mailbox.example"},
	{"Mateo Castellanos", "mateo.c@fastpost.example"},
	{"Elena Castellanos", "elena.castellanos@fastpost.example"},
	{"Ben Achterberg", "ben.achterberg@fastpost.example"},
	{"Sofia Marquez", "sofia.marquez@mailbox.example"},
	{"Jonah Feld", "jonah@feldstudio.example"},
}

// coworker returns the coworker with the given first name; the generators name
// people by role in a story ("Grace runs the retro"), and a typo must not pass.
func coworker(first string) person {
	for _, p := range coworkers {
		if p.first() == first {
			return p
		}
	}
	panic("demo: no coworker named " + first)
}
