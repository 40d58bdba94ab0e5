package turn

// Line is text as one turn's input: text with "\n" added when it does not
// end with one.
func Line(text []byte) []byte {
	if len(text) > 0 && text[len(text)-1] == '\n' {
		return text
	}
	return append(text[:len(text):len(text)], '\n')
}
