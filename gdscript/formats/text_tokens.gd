extends RefCounted
## The tokens of Godot's text resource format, read as the engine's VariantParser::get_token
## (core/variant/variant_parser.cpp) reads them, and the way a reader of the format stops:
## text_format.gd reads the format with them.

enum Tok {
	CURLY_OPEN,
	CURLY_CLOSE,
	BRACKET_OPEN,
	BRACKET_CLOSE,
	PAREN_OPEN,
	PAREN_CLOSE,
	IDENTIFIER,
	STRING,
	STRING_NAME,
	NUMBER,
	COLOR,
	COLON,
	COMMA,
	PERIOD,
	EQUAL,
	EOF,
	ERROR
}

const Scan = preload("scan.gd")

## The character each one-letter escape stands for (b t n f r), by byte; any other stands for itself.
const _ESCAPES: Dictionary = {98: 8, 116: 9, 110: 10, 102: 12, 114: 13}
## The byte of each one-byte token.
const _PUNCTUATION: Dictionary = {
	123: Tok.CURLY_OPEN,
	125: Tok.CURLY_CLOSE,
	91: Tok.BRACKET_OPEN,
	93: Tok.BRACKET_CLOSE,
	40: Tok.PAREN_OPEN,
	41: Tok.PAREN_CLOSE,
	58: Tok.COLON,
	44: Tok.COMMA,
	46: Tok.PERIOD,
	61: Tok.EQUAL,
}

var _bytes: PackedByteArray
var _size: int = 0
var _pos: int = 0
## What the reader finds, and why it stopped.
var _scan: Scan
var _tok: int = Tok.EOF
var _text: String = ""
## Where the next quote and backslash are (searched again only once passed): a long string with
## many escapes is then read in one pass, not one search to its end per escape.
var _next_quote: int = -1
var _next_slash: int = -1
## Where the current token starts (a byte offset).
var _tok_start: int = 0

# ----- tokens (VariantParser::get_token) -----------------------------------------------------------


## Read the next token into _tok (and _text for identifiers, numbers and strings).
func _next() -> void:
	while _pos < _size:
		var c: int = _bytes[_pos]
		_pos += 1
		if c <= 32:
			continue
		_tok_start = _pos - 1
		if _PUNCTUATION.has(c):
			_tok = _PUNCTUATION[c]
			return
		match c:
			59:  # ;
				_skip_comment()
				continue
			35:  # #
				_color()
				return
			38, 64:  # & @ (the second is Godot 3's StringName)
				if _pos >= _size or _bytes[_pos] != 34:
					_error("& or @ is not followed by a string")
					return
				_pos += 1
				_string()
				if _tok == Tok.STRING:
					_tok = Tok.STRING_NAME
				return
			34:  # "
				_string()
				return
		_word(c)
		return
	_tok = Tok.EOF


func _skip_comment() -> void:
	var end: int = _bytes.find(10, _pos)
	_pos = _size if end < 0 else end + 1


func _color() -> void:
	while _pos < _size and _is_hex(_bytes[_pos]):
		_pos += 1
	# The engine's colour token ends at the first non-hex character; at the end of the file the
	# stream reports its end instead.
	_tok = Tok.EOF if _pos >= _size else Tok.COLOR


## A string after its opening quote; _text is its value as the engine builds it (bytes, escapes,
## then read as UTF-8).
func _string() -> void:
	var out: PackedByteArray = PackedByteArray()
	# Whether a \u escape of a UTF-16 lead surrogate waits for its trail (the engine joins the two
	# into one character, and refuses either alone: a red-team read found "1\uD83D\uDE00" read as
	# "1" and two spaces, where the engine has "1 ").
	var lead: bool = false
	while true:
		if _next_quote < _pos and _next_quote != -2:
			_next_quote = _bytes.find(34, _pos)
			if _next_quote < 0:
				_next_quote = -2
		if _next_slash < _pos and _next_slash != -2:
			_next_slash = _bytes.find(92, _pos)
			if _next_slash < 0:
				_next_slash = -2
		var quote: int = _next_quote
		var slash: int = _next_slash
		if quote < 0:
			_error("a string is never closed")
			_pos = _size
			return
		if lead and (slash < 0 or quote < slash or slash > _pos):
			_error("a string has a \\u escape of a UTF-16 lead surrogate without its trail")
			return
		if slash < 0 or quote < slash:
			out.append_array(_bytes.slice(_pos, quote))
			_pos = quote + 1
			break
		out.append_array(_bytes.slice(_pos, slash))
		_pos = slash + 1
		if _pos >= _size:
			_error("a string ends in a backslash")
			return
		var escaped: int = _escape()
		if escaped < 0:
			_error("a string has a malformed \\u escape")
			return
		var half: int = escaped & 0xFFFFFC00
		if half == 0xD800 and not lead:
			lead = true
			continue
		if lead != (half == 0xDC00):
			_error("a string has a \\u escape of a UTF-16 surrogate without its other half")
			return
		if lead:
			lead = false
			escaped = 0x10000  # one character past 0xFF, as the engine joins the two
		# An escaped NUL is a space to the engine (4.6.3 names a property `"\u0000ab"` " ab"); kept as a
		# byte, it ended the string here (get_string_from_utf8() stops at a NUL), so a quoted name that
		# ran over lines read as none (found by a red-team read). A character past 0xFF is some other
		# character than any of the ASCII the checks look for, and a space here.
		out.append(escaped if escaped > 0 and escaped <= 0xFF else 0x20)
	_tok = Tok.STRING
	_text = out.get_string_from_utf8()


## The character an escape stands for, after its backslash; -1 if malformed.
func _escape() -> int:
	var next: int = _bytes[_pos]
	_pos += 1
	if _ESCAPES.has(next):
		return _ESCAPES[next]
	if next == 117 or next == 85:  # u U
		return _hex_escape(4 if next == 117 else 6)
	return next


## The character of a \u (4 digits) or \U (6 digits) escape, after the letter; -1 if malformed.
func _hex_escape(digits: int) -> int:
	if _pos + digits > _size:
		return -1
	var value: int = 0
	for i: int in digits:
		var h: int = _bytes[_pos + i]
		if not _is_hex(h):
			return -1
		value = value * 16 + _hex_value(h)
	_pos += digits
	return value


## A number or an identifier starting with byte `c` (already consumed), or an error token.
func _word(c: int) -> void:
	var start: int = _pos - 1
	if c == 45:  # -
		if _pos >= _size:
			_error("the file ends in a -")
			return
		c = _bytes[_pos]
		_pos += 1
	if _is_digit(c):
		_number_body()
		_text = _bytes.slice(start, _pos).get_string_from_ascii()
		_tok = Tok.NUMBER
	elif _is_alpha(c):
		while _pos < _size and (_is_alpha(_bytes[_pos]) or _is_digit(_bytes[_pos])):
			_pos += 1
		_text = _bytes.slice(start, _pos).get_string_from_ascii()
		_tok = Tok.IDENTIFIER
	else:
		_error("a character the engine's parser does not accept (byte %d)" % c)


## The rest of a number after its first digit: digits, then `.` digits, then e/E, sign, digits.
func _number_body() -> void:
	var state: int = 0  # 0 integer part, 1 decimals, 2 exponent
	var exponent_sign: bool = false
	var exponent_digits: bool = false
	while _pos < _size:
		var c: int = _bytes[_pos]
		if state == 0 and c == 46:
			state = 1
		elif state < 2 and (c == 101 or c == 69):
			state = 2
		elif _is_digit(c):
			exponent_digits = state == 2
		elif state == 2 and (c == 43 or c == 45) and not exponent_sign and not exponent_digits:
			exponent_sign = true
		else:
			return
		_pos += 1


static func _is_digit(c: int) -> bool:
	return c >= 48 and c <= 57


static func _is_alpha(c: int) -> bool:
	return (c >= 65 and c <= 90) or (c >= 97 and c <= 122) or c == 95


static func _is_hex(c: int) -> bool:
	return _is_digit(c) or (c >= 65 and c <= 70) or (c >= 97 and c <= 102)


static func _hex_value(c: int) -> int:
	if _is_digit(c):
		return c - 48
	return (c & ~32) - 55


# ----- errors ------------------------------------------------------------------------------------


## Stop at something this reader does not understand, which the engine might: not vouched for.
func _fail(reason: String) -> void:
	_scan.fail(reason)


## Stop at a syntax error: the engine's loader stops there too.
func _corrupt(reason: String) -> void:
	_scan.fail_corrupt(reason)


## A malformed token: the engine's parser stops there; so does this reader, refusing the file.
func _error(what: String) -> void:
	_tok = Tok.ERROR
	_corrupt("line %d: %s" % [_line(), what])


func _failed() -> bool:
	return _scan.stopped()


func _line() -> int:
	return _bytes.slice(0, mini(_pos, _size)).count(10) + 1
