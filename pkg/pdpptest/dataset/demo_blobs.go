package dataset

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"sync"
)

// blobRef is the record side of a stored blob.
type blobRef struct {
	id     string
	mime   string
	size   int
	sha256 string
}

// addBlob stores b under its content address and returns the reference records
// carry. Identical bytes share one blob, as in a content-addressed store.
func (g *demoGen) addBlob(mime string, b []byte) blobRef {
	sum := sha256.Sum256(b)
	sha := hex.EncodeToString(sum[:])
	id := "blob_sha256_" + sha
	if _, ok := g.blobs[id]; !ok {
		g.blobs[id] = Blob{ID: id, MIMEType: mime, Bytes: b}
	}
	return blobRef{id: id, mime: mime, size: len(b), sha256: sha}
}

// json renders the blob_ref object. fetch_url is absent on purpose: the server
// injects it at read time.
func (r blobRef) json() []byte {
	var o jsonObj
	o.begin()
	o.str("blob_id", r.id)
	o.str("mime_type", r.mime)
	o.int("size_bytes", r.size)
	o.str("sha256", r.sha256)
	return o.close()
}

// pdfDocument renders a one-page PDF with a title and lines of Helvetica text.
// It is a complete file (catalog, page tree, font, content stream, info
// dictionary, cross-reference table), so viewers and sniffers accept it.
func pdfDocument(title string, lines []string) []byte {
	var content bytes.Buffer
	content.WriteString("BT\n/F1 16 Tf\n56 740 Td\n")
	writePDFText(&content, title)
	content.WriteString(" Tj\n/F1 10 Tf\n0 -30 Td\n14 TL\n")
	for _, l := range lines {
		writePDFText(&content, l)
		content.WriteString(" '\n")
	}
	content.WriteString("ET\n")

	var b bytes.Buffer
	offsets := make([]int, 0, 6)
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>")
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj("<< /Length " + strconv.Itoa(content.Len()) + " >>\nstream\n" + content.String() + "endstream")
	var info bytes.Buffer
	info.WriteString("<< /Title ")
	writePDFText(&info, title)
	info.WriteString(" /Producer (pdpp demo generator) >>")
	obj(info.String())
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// writePDFText writes s as a PDF literal string; letters outside ASCII are
// folded because the font program only covers WinAnsi.
func writePDFText(b *bytes.Buffer, s string) {
	b.WriteByte('(')
	for _, r := range foldASCII(s) {
		switch r {
		case '(', ')', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte(')')
}

var asciiFolder = strings.NewReplacer("á", "a", "à", "a", "ã", "a", "â", "a", "é", "e", "ê", "e", "í", "i",
	"ó", "o", "ô", "o", "õ", "o", "ú", "u", "ç", "c", "ñ", "n", "—", "-", "–", "-", "…", "...", "€", "EUR ", "£", "GBP ", "•", "*", "→", "->")

func foldASCII(s string) string {
	s = asciiFolder.Replace(s)
	return strings.Map(func(r rune) rune {
		if r > 126 {
			return '?'
		}
		return r
	}, s)
}

// palImage is an 8-bit indexed raster, the input of the PNG writer. Indexed
// pictures are a third of the size of RGB ones, which keeps compressing them
// cheap.
type palImage struct {
	w, h int
	pal  [][3]byte
	pix  []byte
}

func newPal(w, h int, pal ...[3]byte) *palImage {
	return &palImage{w: w, h: h, pal: pal, pix: make([]byte, w*h)}
}

func (m *palImage) fill(x0, y0, x1, y1 int, c byte) {
	x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, m.w), min(y1, m.h)
	for y := y0; y < y1; y++ {
		row := m.pix[y*m.w+x0 : y*m.w+x1]
		for i := range row {
			row[i] = c
		}
	}
}

// pngPicture draws a small landscape "photo": a sky gradient, a sun and a
// mountain ridge, coloured by the blob generator.
func (g *demoGen) pngPicture(w, h int) []byte {
	r := g.blobRand
	top := [3]int{60 + r.IntN(80), 110 + r.IntN(90), 170 + r.IntN(80)}
	ground := [3]int{40 + r.IntN(60), 70 + r.IntN(70), 40 + r.IntN(50)}
	sunX, sunY, sunR := w/4+r.IntN(w/2), h/6+r.IntN(h/5), 4+r.IntN(h/8+1)
	peak1, peak2 := r.IntN(w), r.IntN(w)
	// Palette: one sky colour per row, the sun, then one ground shade per row.
	img := newPal(w, h)
	for y := 0; y < h; y++ {
		img.pal = append(img.pal, [3]byte{byte(top[0] + (255-top[0])*y/(2*h)), byte(top[1] + (255-top[1])*y/(2*h)), byte(top[2])})
	}
	sun := byte(len(img.pal))
	img.pal = append(img.pal, [3]byte{255, 226, 140})
	groundAt := len(img.pal)
	for d := 0; d < h; d++ {
		shade := 2 * d
		img.pal = append(img.pal, [3]byte{byte(min(255, ground[0]+shade/4)), byte(min(255, ground[1]+shade/3)), byte(min(255, ground[2]+shade/4))})
	}
	for y := 0; y < h; y++ {
		row := img.pix[y*w : (y+1)*w]
		for x := range row {
			c := byte(y)
			if dx, dy := x-sunX, y-sunY; dx*dx+dy*dy <= sunR*sunR {
				c = sun
			}
			if ridge := h/2 + min(abs(x-peak1), abs(x-peak2))/2; y >= ridge {
				c = byte(groundAt + y - ridge)
			}
			row[x] = c
		}
	}
	return g.encodePNG(img)
}

// pngMockup draws a wireframe of an app screen: header, sidebar and cards, the
// kind of image a designer attaches to a review thread.
func (g *demoGen) pngMockup(w, h int) []byte {
	r := g.blobRand
	const (
		_ = iota // background: the zeroed raster already is
		accent
		sidebar
		white
		label
		line
	)
	img := newPal(w, h,
		[3]byte{246, 247, 249},
		[3]byte{byte(30 + r.IntN(60)), byte(90 + r.IntN(80)), byte(140 + r.IntN(100))},
		[3]byte{228, 231, 236},
		[3]byte{255, 255, 255},
		[3]byte{180, 186, 196},
		[3]byte{200, 205, 214},
	)
	img.fill(0, 0, w, h/10, accent)
	img.fill(0, h/10, w/5, h, sidebar)
	cards := 2 + r.IntN(4)
	cw := (w - w/5 - 8*(cards+1)) / cards
	for i := 0; i < cards; i++ {
		x0 := w/5 + 8 + i*(cw+8)
		img.fill(x0, h/10+10, x0+cw, h/10+10+h/4, white)
		img.fill(x0+4, h/10+14, x0+cw/2, h/10+18, label)
	}
	img.fill(w/5+8, h/2, w-8, h-10, white)
	for y := h/2 + 8; y < h-14; y += 8 {
		img.fill(w/5+14, y, w/5+14+(w/2)*(1+r.IntN(3))/3, y+3, line)
	}
	return g.encodePNG(img)
}

// encodePNG writes img as a PNG file (8-bit indexed colour, no filtering). One
// zlib writer is reused for every picture: a fresh compressor per image costs
// more than drawing it.
func (g *demoGen) encodePNG(img *palImage) []byte {
	raw := make([]byte, 0, img.h*(1+img.w))
	for y := 0; y < img.h; y++ {
		raw = append(raw, 0) // filter type None
		raw = append(raw, img.pix[y*img.w:(y+1)*img.w]...)
	}
	var idat bytes.Buffer
	if g.zw == nil {
		g.zw, _ = zlib.NewWriterLevel(&idat, zlib.BestSpeed) // the level is valid: no error
	} else {
		g.zw.Reset(&idat)
	}
	g.zw.Write(raw)
	g.zw.Close()

	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(img.w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(img.h))
	ihdr[8], ihdr[9] = 8, 3 // bit depth 8, indexed colour
	pngChunk(&b, "IHDR", ihdr[:])
	plte := make([]byte, 0, 3*len(img.pal))
	for _, c := range img.pal {
		plte = append(plte, c[:]...)
	}
	pngChunk(&b, "PLTE", plte)
	pngChunk(&b, "IDAT", idat.Bytes())
	pngChunk(&b, "IEND", nil)
	return b.Bytes()
}

func pngChunk(b *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	b.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	b.Write(n[:])
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// LargeBlobBytes is the size of the demo's one oversized blob: above 8 MiB,
// the adapter's default bound on one blob.
const LargeBlobBytes = 9<<20 + 4321

// largeArchive is the oversized blob: a zip local-file signature and then
// deterministic noise (stored photos do not compress). Every dataset built
// in a process shares the one slice; nothing writes to it.
var largeArchive = sync.OnceValue(func() []byte {
	b := make([]byte, LargeBlobBytes)
	copy(b, "PK\x03\x04")
	x := uint64(0x9E3779B97F4A7C15)
	for i := 4; i+8 <= len(b); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(b[i:], x)
	}
	return b
})
