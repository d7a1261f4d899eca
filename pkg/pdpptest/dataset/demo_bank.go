package dataset

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The bank feed: five accounts at Harbor Credit Union, every card payment,
// transfer and deposit over eighteen months, and month-end balances computed
// from those transactions, so sums and balances agree.

type demoAccount struct {
	id, name, typ, currency string
	number, routing, masked string
	openedOn                string
	creditLimit             int64 // cents; 0 when the account has none
	opening                 int64 // balance at demoStart, cents
}

var demoAccounts = []*demoAccount{
	{id: "acct_chk_4821", name: "Everyday Checking", typ: "checking", currency: "USD",
		number: "730144824821", routing: "323982146", masked: "••4821", openedOn: "2017-08-14", opening: 684219},
	{id: "acct_sav_1190", name: "High-Yield Savings", typ: "savings", currency: "USD",
		number: "730144821190", routing: "323982146", masked: "••1190", openedOn: "2019-02-03", opening: 1825000},
	{id: "acct_cc_2207", name: "Visa Signature Rewards", typ: "credit_card", currency: "USD",
		number: "4417220398512207", masked: "••2207", openedOn: "2018-11-20", creditLimit: 1200000, opening: -131244},
	{id: "acct_eur_3356", name: "Travel Wallet (EUR)", typ: "multi_currency", currency: "EUR",
		number: "PT50000201231234567893356", masked: "••3356", openedOn: "2025-08-30"},
	{id: "acct_gbp_3357", name: "Travel Wallet (GBP)", typ: "multi_currency", currency: "GBP",
		number: "GB29HRBC60161331923357", masked: "••3357", openedOn: "2025-08-30"},
}

func accountByID(id string) *demoAccount {
	for _, a := range demoAccounts {
		if a.id == id {
			return a
		}
	}
	panic("demo: no account " + id)
}

// demoMerchant is a place Nora pays. receipt is the address its emailed receipts
// come from, empty when it sends none; receiptPDF adds an invoice attachment.
type demoMerchant struct {
	name, category, descriptor string
	city, country, channel     string
	lo, hi                     int64 // amount range, cents
	receipt                    string
	receiptPDF                 bool
}

// demoTxn is one transaction before it is written as a record.
type demoTxn struct {
	id           string
	account      *demoAccount
	at, posted   time.Time // posted is zero while pending or when declined
	cents        int64     // negative: money out
	currency     string
	origCents    int64
	origCurrency string // empty for domestic transactions
	status       string
	merchant     *demoMerchant
	category     string
	description  string
	channel      string
	recurring    bool
	note         string
}

// habit is spending that happens on a share of days.
type habit struct {
	m        demoMerchant
	perDay   float64
	weekdays bool // only Monday to Friday
	from, to int  // local hour window
	debit    float64
}

var portland = [2]string{"Portland", "US"}

func local(name, category, descriptor, channel string, lo, hi int64) demoMerchant {
	return demoMerchant{name: name, category: category, descriptor: descriptor, city: portland[0], country: portland[1],
		channel: channel, lo: lo, hi: hi}
}

var demoHabits = func() []habit {
	greenleaf := local("Greenleaf Market", "groceries", "GREENLEAF MKT #114 PORTLAND OR", "in_store", 3800, 16500)
	greenleaf.receipt = "receipts@greenleafmarket.example"
	zipline := local("Zipline Rides", "rideshare", "ZIPLINE *TRIP", "online", 1150, 3800)
	zipline.receipt = "receipts@ziplinerides.example"
	bookshop := local("Bookshop Row", "books", "BOOKSHOP ROW ONLINE", "online", 1599, 6200)
	bookshop.receipt = "orders@bookshoprow.example"
	northline := local("Northline Outdoor Supply", "shopping", "NORTHLINE OUTDOOR 0042", "online", 3900, 32000)
	northline.receipt, northline.receiptPDF = "orders@northlineoutdoor.example", true
	return []habit{
		{m: greenleaf, perDay: 0.14, from: 10, to: 20, debit: 0.25},
		{m: local("Alder Street Co-op", "groceries", "ALDER ST COOP PORTLAND OR", "in_store", 1200, 6400), perDay: 0.07, from: 9, to: 20, debit: 0.5},
		{m: local("Costwise Wholesale", "groceries", "COSTWISE #0371 PORTLAND OR", "in_store", 8900, 26400), perDay: 0.03, from: 11, to: 18},
		{m: local("Morning Tide Coffee", "coffee", "SQ *MORNING TIDE COFFEE", "in_store", 450, 975), perDay: 0.35, weekdays: true, from: 7, to: 10},
		{m: local("Pearl Roasters", "coffee", "PEARL ROASTERS PORTLAND", "in_store", 400, 1250), perDay: 0.1, from: 8, to: 16},
		{m: local("Koji Ramen Bar", "dining", "KOJI RAMEN BAR", "in_store", 2400, 6800), perDay: 0.04, from: 18, to: 21},
		{m: local("Luca's Trattoria", "dining", "LUCAS TRATTORIA PDX", "in_store", 4200, 13800), perDay: 0.03, from: 18, to: 21},
		{m: local("La Taqueria Azul", "dining", "TAQUERIA AZUL", "in_store", 1600, 4800), perDay: 0.05, from: 12, to: 21},
		{m: local("Thai Orchid Kitchen", "dining", "THAI ORCHID KITCHEN", "online", 2800, 6400), perDay: 0.04, from: 17, to: 21},
		{m: local("Little Fig Bistro", "dining", "LITTLE FIG BISTRO", "in_store", 3600, 11200), perDay: 0.02, from: 11, to: 21},
		{m: zipline, perDay: 0.08, from: 8, to: 23},
		{m: bookshop, perDay: 0.04, from: 8, to: 23},
		{m: northline, perDay: 0.012, from: 8, to: 23},
		{m: local("Hardware Haven", "home", "HARDWARE HAVEN 12", "in_store", 600, 8900), perDay: 0.015, from: 9, to: 18},
		{m: local("Riverbend Pharmacy", "health", "RIVERBEND PHARMACY", "in_store", 800, 4200), perDay: 0.03, from: 9, to: 19},
		{m: local("Hollywood Arts Cinema", "entertainment", "HOLLYWOOD ARTS CINEMA", "online", 1400, 3200), perDay: 0.025, from: 12, to: 21},
		{m: local("Petal & Stem", "gifts", "PETAL AND STEM FLOWERS", "in_store", 3500, 9500), perDay: 0.01, from: 10, to: 18},
	}
}()

// monthly is a fixed payment on a day of each month.
type monthly struct {
	m     demoMerchant
	day   int
	cents int64
	acct  string
}

var demoSubscriptions = []monthly{
	{m: local("Summit Climbing Gym", "fitness", "SUMMIT CLIMBING MEMBERSHIP", "online", 0, 0), day: 1, cents: -7900, acct: "acct_cc_2207"},
	{m: local("City Transit", "transport", "CITY TRANSIT MONTHLY PASS", "online", 0, 0), day: 1, cents: -10000, acct: "acct_cc_2207"},
	{m: local("Soundwave Music", "subscriptions", "SOUNDWAVE*PREMIUM", "online", 0, 0), day: 3, cents: -1099, acct: "acct_cc_2207"},
	{m: local("Cloudbox Storage", "subscriptions", "CLOUDBOX 200GB", "online", 0, 0), day: 9, cents: -299, acct: "acct_cc_2207"},
	{m: local("StreamBox", "subscriptions", "STREAMBOX.EXAMPLE", "online", 0, 0), day: 12, cents: -1549, acct: "acct_cc_2207"},
	{m: local("The Daily Ledger", "subscriptions", "DAILY LEDGER DIGITAL", "online", 0, 0), day: 20, cents: -800, acct: "acct_cc_2207"},
	{m: local("Fibernet Internet", "utilities", "FIBERNET AUTOPAY", "ach", 0, 0), day: 22, cents: -6500, acct: "acct_chk_4821"},
	{m: local("Evergreen Brokerage", "investment", "EVERGREEN BROKERAGE ACH", "transfer", 0, 0), day: 2, cents: -100000, acct: "acct_chk_4821"},
	{m: local("Brightpath Student Loans", "loan", "BRIGHTPATH LOAN PMT", "ach", 0, 0), day: 5, cents: -41266, acct: "acct_chk_4821"},
	{m: local("Cascade Mobile", "utilities", "CASCADE MOBILE AUTOPAY", "ach", 0, 0), day: 14, cents: -5800, acct: "acct_chk_4821"},
}

var (
	merchantRent    = local("Riverside Property Management", "rent", "RIVERSIDE PROP MGMT ACH DEBIT", "ach", 0, 0)
	merchantPayroll = local("Tidewater Labs", "income", "TIDEWATER LABS PAYROLL DIR DEP", "ach", 0, 0)
	merchantPower   = demoMerchant{name: "Rose City Power", category: "utilities", descriptor: "ROSE CITY POWER AUTOPAY",
		city: "Portland", country: "US", channel: "ach", receipt: "billing@rosecitypower.example", receiptPDF: true}
	merchantWater = local("Cascade Water Bureau", "utilities", "CASCADE WATER BUREAU", "ach", 0, 0)
	merchantBank  = local("Harbor Credit Union", "interest", "INTEREST PAYMENT", "transfer", 0, 0)
	merchantATM   = local("Harbor Credit Union ATM", "cash", "ATM WITHDRAWAL HAWTHORNE BLVD", "atm", 0, 0)
	merchantAir   = demoMerchant{name: "Cascadia Air", category: "travel", descriptor: "CASCADIA AIR 0271234567", city: "Seattle", country: "US",
		channel: "online", receipt: "bookings@cascadiaair.example", receiptPDF: true}
)

// demoTrip is a journey abroad: what was bought there, in which currency and from
// which account.
type demoTrip struct {
	city, country, currency string
	zone, note              string  // time zone name; calendar description
	account                 string  // account paying local purchases
	fx                      float64 // USD per unit of local currency
	utcOffset               int     // local offset in hours during the trip
	from, to                localDay
	flight                  demoFlight
	places                  []demoMerchant
	hotel                   demoMerchant
	hotelNights             int
	hotelPerNight           int64 // local cents
}

type demoFlight struct {
	booked localDay
	cents  int64
	route  string
	code   string
}

func abroad(name, category, descriptor, city, country, channel string, lo, hi int64) demoMerchant {
	return demoMerchant{name: name, category: category, descriptor: descriptor, city: city, country: country, channel: channel, lo: lo, hi: hi}
}

var demoTrips = []demoTrip{
	{
		city: "London", country: "GB", currency: "GBP", account: "acct_gbp_3357", fx: 1.27, utcOffset: 1,
		zone: "Europe/London", note: "Design Systems London, then two days of museums and walking.",
		from: localDay{2025, time.September, 16}, to: localDay{2025, time.September, 21},
		flight: demoFlight{booked: localDay{2025, time.July, 2}, cents: -112840, route: "PDX → LHR", code: "CA 416"},
		hotel:  abroad("The Marlowe Hotel", "travel", "MARLOWE HOTEL LONDON", "London", "GB", "in_store", 0, 0), hotelNights: 5, hotelPerNight: 16900,
		places: []demoMerchant{
			abroad("Crumb & Kettle", "coffee", "CRUMB AND KETTLE", "London", "GB", "in_store", 320, 980),
			abroad("Borough Provisions", "dining", "BOROUGH PROVISIONS LTD", "London", "GB", "in_store", 600, 2400),
			abroad("London Transit", "transport", "LDN TRANSIT CONTACTLESS", "London", "GB", "in_store", 280, 850),
			abroad("Camden Books", "books", "CAMDEN BOOKS", "London", "GB", "in_store", 999, 2499),
			abroad("The Anchor & Hope", "dining", "ANCHOR AND HOPE SE1", "London", "GB", "in_store", 2200, 5800),
		},
	},
	{
		city: "Lisbon", country: "PT", currency: "EUR", account: "acct_eur_3356", fx: 1.09, utcOffset: 0,
		zone: "Europe/Lisbon", note: "Holiday with Priya. Hotel Avenida Lisboa for four nights, a day in Porto by train, dinner with Ines.",
		from: localDay{2026, time.March, 12}, to: localDay{2026, time.March, 22},
		flight: demoFlight{booked: localDay{2026, time.January, 14}, cents: -124680, route: "PDX → LIS", code: "CA 902"},
		hotel:  abroad("Hotel Avenida Lisboa", "travel", "HOTEL AVENIDA LISBOA", "Lisbon", "PT", "in_store", 0, 0), hotelNights: 4, hotelPerNight: 15300,
		places: []demoMerchant{
			abroad("Pastelaria Aurora", "coffee", "PASTELARIA AURORA", "Lisbon", "PT", "in_store", 240, 960),
			abroad("Mercado da Ribeira", "dining", "MERCADO RIBEIRA BANCA 14", "Lisbon", "PT", "in_store", 800, 3200),
			abroad("Lisboa Táxi", "transport", "LISBOA TAXI 2187", "Lisbon", "PT", "in_store", 700, 1800),
			abroad("Tasca do Bairro", "dining", "TASCA DO BAIRRO", "Lisbon", "PT", "in_store", 2400, 6800),
			abroad("Livraria do Chiado", "books", "LIVRARIA DO CHIADO", "Lisbon", "PT", "in_store", 1250, 3400),
			abroad("Comboios de Portugal", "transport", "CP COMBOIOS LISBOA", "Lisbon", "PT", "online", 2490, 4980),
		},
	},
	{
		city: "Vancouver", country: "CA", currency: "CAD", account: "acct_cc_2207", fx: 0.73, utcOffset: -7,
		zone: "America/Vancouver", note: "Long weekend with Jonah and Sofia. Harbourfront Hotel, three nights.",
		from: localDay{2026, time.July, 9}, to: localDay{2026, time.July, 12},
		hotel: abroad("Harbourfront Hotel", "travel", "HARBOURFRONT HOTEL VANCOUVER", "Vancouver", "CA", "in_store", 0, 0), hotelNights: 3, hotelPerNight: 24900,
		places: []demoMerchant{
			abroad("Granville Island Market", "groceries", "GRANVILLE IS MARKET", "Vancouver", "CA", "in_store", 1200, 4000),
			abroad("SeaBus Transit", "transport", "TRANSLINK SEABUS", "Vancouver", "CA", "in_store", 315, 630),
			abroad("Kitsilano Coffee Co.", "coffee", "KITSILANO COFFEE", "Vancouver", "CA", "in_store", 400, 1100),
			abroad("Gastown Noodle House", "dining", "GASTOWN NOODLE HSE", "Vancouver", "CA", "in_store", 2200, 6400),
		},
	},
}

var demoNotes = []string{
	"Dinner with Priya", "Split with Ben, he owes me half", "Birthday gift for Mateo", "Team lunch, expense this",
	"Offsite snacks, expense this", "Mom's flowers", "New climbing shoes", "Book club pick", "Return if it doesn't fit",
	"Groceries for the potluck", "Replacement charger", "Anniversary dinner for Jonah and Sofia",
}

// bank generates the Harbor Credit Union connection and leaves the transactions
// in g.txns for the receipts in the personal mailbox.
func (g *demoGen) bank() map[string][]Record {
	r := demoRand(randBank)
	var txns []demoTxn
	add := func(t demoTxn) {
		if t.at.After(demoNow) {
			return // later today: it has not happened yet
		}
		t.id = "txn_" + randHex(r, 20)
		// Declines are decided at the till, so autopay never pays for them.
		if t.account.typ == "credit_card" && t.cents < 0 && t.cents > -20000 && t.merchant != nil && r.IntN(150) == 0 {
			t.status = "declined"
		}
		if t.currency == "" {
			t.currency = t.account.currency
		}
		if t.category == "" && t.merchant != nil {
			t.category = t.merchant.category
		}
		if t.description == "" && t.merchant != nil {
			t.description = t.merchant.descriptor
		}
		if t.channel == "" && t.merchant != nil {
			t.channel = t.merchant.channel
		}
		txns = append(txns, t)
	}
	chk, sav, card := accountByID("acct_chk_4821"), accountByID("acct_sav_1190"), accountByID("acct_cc_2207")
	randCents := func(lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }

	// Trips are booked months ahead; their charges exist before the daily
	// loop so the card autopay includes them.
	for _, trip := range demoTrips {
		g.tripBookings(r, trip, add)
	}
	first, last := dayOf(demoStart), dayOf(demoNow)
	for d := first; d.key() <= last.key(); d = d.addDays(1) {
		day := time.Date(d.y, d.m, d.d, 0, 0, 0, 0, time.UTC)
		monthEnd := day.AddDate(0, 0, 1).Day() == 1
		trip := tripOn(d)
		if trip != nil {
			g.tripDay(r, trip, d, add)
		}
		for _, h := range demoHabits {
			if trip != nil {
				break // away from home: no coffee at the usual place
			}
			if h.weekdays && (d.weekday() == time.Saturday || d.weekday() == time.Sunday) {
				continue
			}
			if r.Float64() >= h.perDay {
				continue
			}
			acct := card
			if r.Float64() < h.debit {
				acct = chk
			}
			m := h.m
			t := demoTxn{account: acct, at: d.at(h.from+r.IntN(h.to-h.from), r.IntN(60)), cents: -randCents(m.lo, m.hi), merchant: &m}
			if r.IntN(25) == 0 {
				t.note = demoNotes[r.IntN(len(demoNotes))]
			}
			add(t)
		}
		for _, s := range demoSubscriptions {
			if d.d == s.day {
				m := s.m
				add(demoTxn{account: accountByID(s.acct), at: d.at(4, 10+r.IntN(40)), cents: s.cents, merchant: &m, recurring: true})
			}
		}
		switch {
		case d.d == 1:
			rent := int64(-215000)
			if d.key() >= 20260601 {
				rent = -222500
			}
			add(demoTxn{account: chk, at: d.at(3, 5), cents: rent, merchant: &merchantRent, recurring: true})
		case d.d == 15 || monthEnd:
			pay := int64(339538) // net, after tax and the 401(k)
			if d.key() >= 20260401 {
				pay = 356204
			}
			add(demoTxn{account: chk, at: d.at(2, 30), cents: pay, merchant: &merchantPayroll, recurring: true})
		case d.d == 16:
			add(demoTxn{account: chk, at: d.at(6, 0), cents: -80000, description: "TRANSFER TO SAVINGS ••1190", category: "transfer", channel: "transfer", recurring: true})
			add(demoTxn{account: sav, at: d.at(6, 0), cents: 80000, description: "TRANSFER FROM CHECKING ••4821", category: "transfer", channel: "transfer", recurring: true})
		case d.d == 18:
			// Heating in winter, fans in August.
			base := map[time.Month]int64{1: 13800, 2: 12400, 3: 9800, 4: 7200, 5: 5600, 6: 5200, 7: 6900, 8: 8400, 9: 6100, 10: 6800, 11: 9900, 12: 13100}[d.m]
			add(demoTxn{account: chk, at: d.at(5, 20), cents: -(base + r.Int64N(1800)), merchant: &merchantPower, recurring: true})
		case d.d == 25:
			// Autopay clears the statement balance: the card's balance when the
			// month began.
			owed := card.opening
			statement := localDay{d.y, d.m, 1}.at(0, 0)
			for _, t := range txns {
				if t.account == card && t.at.Before(statement) && t.status != "declined" {
					owed += t.cents
				}
			}
			if owed < 0 {
				add(demoTxn{account: chk, at: d.at(7, 0), cents: owed, description: "VISA PAYMENT ••2207", category: "transfer", channel: "transfer", recurring: true})
				add(demoTxn{account: card, at: d.at(7, 0), cents: -owed, description: "PAYMENT RECEIVED - THANK YOU", category: "transfer", channel: "transfer", recurring: true})
			}
		case d.d == 7 && d.m%2 == 0:
			add(demoTxn{account: chk, at: d.at(5, 45), cents: -(7800 + r.Int64N(1800)), merchant: &merchantWater, recurring: true})
		}
		if monthEnd {
			add(demoTxn{account: sav, at: d.at(20, 0), cents: 6100 + r.Int64N(500), merchant: &merchantBank, channel: "transfer"})
		}
		if r.IntN(70) == 0 {
			add(demoTxn{account: chk, at: d.at(9+r.IntN(10), r.IntN(60)), cents: -int64(4+r.IntN(5)) * 2000, merchant: &merchantATM})
		}
	}

	slices.SortStableFunc(txns, func(a, b demoTxn) int { return a.at.Compare(b.at) })
	for _, refund := range g.settle(r, txns) {
		add(refund)
	}
	slices.SortStableFunc(txns, func(a, b demoTxn) int { return a.at.Compare(b.at) })
	g.txns = txns
	return g.bankRecords(txns)
}

func tripOn(d localDay) *demoTrip {
	k := d.key()
	for i := range demoTrips {
		if t := &demoTrips[i]; k >= t.from.key() && k <= t.to.key() {
			return t
		}
	}
	return nil
}

// tripDay spends one day abroad: a few purchases in local currency, from the
// travel wallet or, for Canada, the card with the original amount kept.
func (g *demoGen) tripDay(r *rand.Rand, trip *demoTrip, d localDay, add func(demoTxn)) {
	n := 3 + r.IntN(4)
	for i := 0; i < n; i++ {
		m := trip.places[r.IntN(len(trip.places))]
		localCents := m.lo + r.Int64N(m.hi-m.lo+1)
		at := time.Date(d.y, d.m, d.d, 8+i*3+r.IntN(3)-trip.utcOffset, r.IntN(60), 0, 0, time.UTC)
		g.tripPurchase(trip, &m, at, localCents, add)
	}
}

func (g *demoGen) tripPurchase(trip *demoTrip, m *demoMerchant, at time.Time, localCents int64, add func(demoTxn)) {
	acct := accountByID(trip.account)
	t := demoTxn{account: acct, at: at, merchant: m}
	if acct.currency == trip.currency {
		t.cents = -localCents
	} else {
		t.cents = -int64(float64(localCents)*trip.fx + 0.5)
		t.origCents, t.origCurrency = -localCents, trip.currency
	}
	add(t)
}

// tripBookings adds what a trip costs before and around it: the flight, the
// wallet top-up from checking, and the hotel bill on departure.
func (g *demoGen) tripBookings(r *rand.Rand, trip demoTrip, add func(demoTxn)) {
	card, chk := accountByID("acct_cc_2207"), accountByID("acct_chk_4821")
	if trip.flight.cents != 0 {
		add(demoTxn{account: card, at: trip.flight.booked.at(21, 14), cents: trip.flight.cents, merchant: &merchantAir,
			description: merchantAir.descriptor + " " + trip.flight.code})
	}
	hotelLocal := trip.hotelPerNight * int64(trip.hotelNights)
	if wallet := accountByID(trip.account); wallet.typ == "multi_currency" {
		topUp := hotelLocal + 60000
		at := trip.from.addDays(-10).at(19, 30)
		add(demoTxn{account: chk, at: at, cents: -int64(float64(topUp)*trip.fx + 0.5), category: "transfer", channel: "transfer",
			description: "TRANSFER TO TRAVEL WALLET " + trip.currency})
		add(demoTxn{account: wallet, at: at, cents: topUp, category: "transfer", channel: "transfer",
			description: "TOP UP FROM CHECKING ••4821"})
	}
	hotel := trip.hotel
	checkout := trip.from.addDays(trip.hotelNights)
	at := time.Date(checkout.y, checkout.m, checkout.d, 10-trip.utcOffset, 40+r.IntN(15), 0, 0, time.UTC)
	g.tripPurchase(&trip, &hotel, at, hotelLocal, add)
}

// settle gives every transaction its status and posting time: the last two
// days are still pending, a few card payments were declined, and two purchases
// were refunded. It returns the refund credits to add.
func (g *demoGen) settle(r *rand.Rand, txns []demoTxn) []demoTxn {
	pendingFrom := demoNow.Add(-48 * time.Hour)
	var refunds []demoTxn
	for i := range txns {
		t := &txns[i]
		switch {
		case t.status == "declined":
		case !t.at.Before(pendingFrom):
			t.status = "pending"
		default:
			t.status = "posted"
			lag := time.Duration(0)
			if t.channel == "in_store" || t.channel == "online" {
				lag = time.Duration(20+r.IntN(40)) * time.Hour
			}
			t.posted = t.at.Add(lag)
			if len(refunds) < 2 && t.merchant != nil && (t.merchant.name == "Northline Outdoor Supply" || t.merchant.name == "Bookshop Row") &&
				t.at.After(demoStart.AddDate(0, 3, 0)) && t.at.Before(demoNow.AddDate(0, 0, -30)) && r.IntN(3) == 0 {
				t.status = "refunded"
				t.note = "Returned, refund issued"
				back := t.at.AddDate(0, 0, 9)
				refunds = append(refunds, demoTxn{account: t.account, at: back, posted: back.Add(26 * time.Hour), cents: -t.cents, status: "posted",
					category: "refund", channel: t.channel, description: "REFUND " + t.merchant.descriptor, merchant: t.merchant})
			}
		}
	}
	return refunds
}

// bankRecords writes accounts, transactions and month-end balances.
func (g *demoGen) bankRecords(txns []demoTxn) map[string][]Record {
	o, a := &g.obj, &g.arena
	out := map[string][]Record{}

	balance := map[string]int64{}
	for _, acct := range demoAccounts {
		balance[acct.id] = acct.opening
	}
	counts := map[string]int{}
	month := dayOf(demoStart)
	flushMonth := func(end localDay) {
		date := end.String()
		emitted := time.Date(end.y, end.m, end.d, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1).Add(6 * time.Hour)
		for _, acct := range demoAccounts {
			if acct.openedOn > date {
				continue
			}
			o.begin()
			o.str("account_id", acct.id)
			o.str("date", date)
			o.money("balance", balance[acct.id])
			o.str("currency", acct.currency)
			o.int("transaction_count", counts[acct.id])
			out["balances"] = append(out["balances"], record(compoundKey(acct.id, date), emitted, o.end(a)))
			counts[acct.id] = 0
		}
	}
	for _, t := range txns {
		if d := dayOf(t.at); d.m != month.m || d.y != month.y {
			flushMonth(lastDayOf(month))
			month = d
		}
		if t.status == "posted" || t.status == "refunded" {
			balance[t.account.id] += t.cents
			counts[t.account.id]++
		}

		o.begin()
		o.str("id", t.id)
		o.str("account_id", t.account.id)
		o.str("account_number", t.account.number)
		o.time("transacted_at", t.at)
		if t.posted.IsZero() {
			o.null("posted_at")
		} else {
			o.time("posted_at", t.posted)
		}
		o.money("amount", t.cents)
		o.str("currency", t.currency)
		if t.origCurrency == "" {
			o.null("original_amount")
			o.null("original_currency")
		} else {
			o.money("original_amount", t.origCents)
			o.str("original_currency", t.origCurrency)
		}
		o.str("status", t.status)
		if t.merchant != nil {
			o.str("merchant", t.merchant.name)
			o.str("category", t.category)
			o.str("description", t.description)
			o.str("merchant_city", t.merchant.city)
			o.str("merchant_country", t.merchant.country)
		} else {
			o.null("merchant")
			o.str("category", t.category)
			o.str("description", t.description)
			o.null("merchant_city")
			o.null("merchant_country")
		}
		o.str("payment_channel", t.channel)
		o.bool("is_recurring", t.recurring)
		o.optStr("note", t.note)
		emitted := t.at.Add(90 * time.Minute)
		if !t.posted.IsZero() {
			emitted = t.posted.Add(2 * time.Hour)
		}
		emitted = minTime(emitted, demoNow)
		out["transactions"] = append(out["transactions"], record(t.id, emitted, o.end(a)))
	}
	// The month in progress has no closing balance yet.

	for _, acct := range demoAccounts {
		o.begin()
		o.str("account_id", acct.id)
		o.str("name", acct.name)
		o.str("type", acct.typ)
		o.str("currency", acct.currency)
		o.str("institution", "Harbor Credit Union")
		o.str("account_number", acct.number)
		o.optStr("routing_number", acct.routing)
		o.str("masked_number", acct.masked)
		o.str("opened_on", acct.openedOn)
		o.str("status", "open")
		o.money("current_balance", balance[acct.id])
		if acct.creditLimit > 0 {
			o.money("credit_limit", acct.creditLimit)
		} else {
			o.null("credit_limit")
		}
		out["accounts"] = append(out["accounts"], record(acct.id, demoSync, o.end(a)))
	}
	return out
}

func lastDayOf(d localDay) localDay {
	t := time.Date(d.y, d.m, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 1, -1)
	return localDay{t.Year(), t.Month(), t.Day()}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// formatMoney renders cents for people: "$1,204.33", "€49.80", "-$12.00".
func formatMoney(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	symbol := map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "CAD": "CA$"}[currency]
	whole := strconv.FormatInt(cents/100, 10)
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	frac := strconv.FormatInt(cents%100+100, 10)[1:]
	return sign + symbol + b.String() + "." + frac
}
