#include "compiler/source_scan.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kbench {
namespace {

bool IsIdentChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Bytes that compilers lex differently in code (outside comments and
// literals): extended characters and '$' may or may not continue an
// identifier or a pp-number, and '\' starts a universal character name. Where
// the policy and NVRTC could disagree on where a literal or comment starts,
// the source is refused rather than guessed at.
bool AmbiguousInCode(char c) {
  return static_cast<unsigned char>(c) >= 0x80 || c == '$' || c == '\\';
}

}  // namespace

ScannedSource ScanSource(absl::string_view src) {
  ScannedSource s;
  // Phase 2: splice, remembering each character's line.
  std::string text;
  std::vector<int> lines;
  text.reserve(src.size());
  lines.reserve(src.size());
  int line = 1;
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\\') {
      size_t j = i + 1;
      while (j < src.size() && (src[j] == ' ' || src[j] == '\t')) ++j;
      const bool spaces = j > i + 1;
      if (j < src.size() && src[j] == '\r') ++j;
      if (j < src.size() && src[j] == '\n') {
        if (spaces) {
          // GCC splices "\ <newline>" (with a warning), others do not.
          s.refused =
              "a backslash followed by spaces at the end of a line (compilers "
              "disagree on whether it joins the lines)";
          s.refused_line = line;
          return s;
        }
        i = j;
        ++line;
        continue;
      }
    }
    text.push_back(src[i]);
    lines.push_back(line);
    if (src[i] == '\n') ++line;
  }

  s.clean.reserve(text.size());
  s.code.reserve(text.size());
  s.line.reserve(text.size());
  auto emit = [&s](char clean, char code, int l) {
    s.clean.push_back(clean);
    s.code.push_back(code);
    s.line.push_back(l);
  };
  auto refuse = [&s](absl::string_view why, int l) {
    s.refused = std::string(why);
    s.refused_line = l;
  };
  const size_t n = text.size();
  // The identifier that ends right before text[i], if any (a literal's
  // encoding prefix such as u8 or R).
  size_t word_start = 0, word_end = std::string::npos;
  size_t i = 0;
  while (i < n) {
    const char c = text[i];
    const char next = i + 1 < n ? text[i + 1] : '\0';
    if (c == '/' && next == '/') {  // Line comment: up to the newline.
      emit(' ', ' ', lines[i]);
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && next == '*') {  // Block comment: one space.
      emit(' ', ' ', lines[i]);
      const size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? n : end + 2;
      continue;
    }
    if (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_') {
      // An identifier, lexed whole so that a prefix is never guessed from
      // the letters before a quote.
      word_start = i;
      while (i < n && IsIdentChar(text[i])) {
        emit(text[i], text[i], lines[i]);
        ++i;
      }
      word_end = i;
      continue;
    }
    if (absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && absl::ascii_isdigit(static_cast<unsigned char>(next)))) {
      // A pp-number ([lex.ppnumber]): digits, letters, '_', '.', an
      // exponent sign, and digit separators: a quote followed by a digit or
      // letter (1'000, 0x1'ff). Any other quote opens a character literal.
      size_t e = i + 1;
      while (e < n) {
        const char d = text[e];
        const bool sign =
            (d == '+' || d == '-') && absl::StrContains("eEpP", text[e - 1]);
        if (IsIdentChar(d) || d == '.' || sign) {
          ++e;
        } else if (d == '\'' && e + 1 < n && IsIdentChar(text[e + 1])) {
          e += 2;
        } else {
          break;
        }
      }
      if (e + 1 < n && text[e] == '\'' && AmbiguousInCode(text[e + 1])) {
        refuse(
            "a quote after a number followed by a non-ASCII character, '$' or "
            "'\\' (a digit separator or a character literal, depending on the "
            "compiler)",
            lines[e]);
        return s;
      }
      for (; i < e; ++i) emit(text[i], text[i], lines[i]);
      continue;
    }
    if (c == '"' || c == '\'') {
      // Prefix letters right before the quote (L, u, U, u8, R...).
      const absl::string_view prefix =
          word_end == i
              ? absl::string_view(text.data() + word_start, i - word_start)
              : absl::string_view();
      const bool raw =
          c == '"' && (prefix == "R" || prefix == "LR" || prefix == "uR" ||
                       prefix == "UR" || prefix == "u8R");
      if (raw) {
        // [lex.string]: at most 16 delimiter characters, none of them a
        // space, parenthesis, backslash or control character.
        size_t open = i + 1;
        while (open < n && open - i - 1 <= 16 && text[open] != '(' &&
               absl::ascii_isgraph(static_cast<unsigned char>(text[open])) &&
               text[open] != ')' && text[open] != '\\') {
          ++open;
        }
        if (open >= n || text[open] != '(' || open - i - 1 > 16) {
          refuse(
              "a raw string literal whose delimiter is not at most 16 "
              "printable characters without spaces, parentheses or "
              "backslashes, followed by '('",
              lines[i]);
          return s;
        }
        const std::string close =
            absl::StrCat(")", text.substr(i + 1, open - i - 1), "\"");
        size_t end = text.find(close, open + 1);
        end = end == std::string::npos ? n : end + close.size();
        for (size_t k = i; k < end; ++k) {
          const bool edge = k == i || k + 1 == end;
          emit(text[k] == '\n' ? '\n' : text[k],
               text[k] == '\n' ? '\n' : (edge ? text[k] : ' '), lines[k]);
        }
        i = end;
        continue;
      }
      // Ordinary literal: ends at the closing quote or the line's end.
      emit(c, c, lines[i]);
      ++i;
      while (i < n && text[i] != '\n') {
        if (text[i] == '\\' && i + 1 < n && text[i + 1] != '\n') {
          emit(text[i], ' ', lines[i]);
          emit(text[i + 1], ' ', lines[i + 1]);
          i += 2;
          continue;
        }
        if (text[i] == c) {
          emit(c, c, lines[i]);
          ++i;
          break;
        }
        emit(text[i], ' ', lines[i]);
        ++i;
      }
      continue;
    }
    if (AmbiguousInCode(c)) {
      refuse(
          "a non-ASCII character, '$' or '\\' outside comments and literals "
          "(compilers disagree on whether it continues an identifier)",
          lines[i]);
      return s;
    }
    emit(c, c, lines[i]);
    ++i;
  }
  return s;
}

}  // namespace kbench
