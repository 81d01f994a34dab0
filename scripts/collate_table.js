// Prints the expected-order table in src/util/collate_tests.rs from Node's own
// `localeCompare` (ICU root collation). Run with Node 20 and paste the output over the
// table there: `node scripts/collate_table.js`.
const cmp = (a, b) => a.localeCompare(b);

const ascii = [];
for (let i = 32; i < 127; i++) ascii.push(String.fromCharCode(i));
const latin = [..."éèêëàáâãäåöøüßæçñœıłđðþŋ§©°±µ¿¡«»€£¥"];
const chars = ["\t", "\u00a0", ...ascii, ...latin, ...latin.map((c) => c.toUpperCase())];
const uniq = (xs) => [...new Set(xs)];

const groups = {
  single_characters: uniq(chars),
  a_c_b: uniq(chars.map((c) => `a${c}b`)),
  digits: ["0", "1", "9", "10", "01", "1a", "a1", "file10", "file9", "file1", "file01", "file-1", "file_1", "file 1", "file.1", "v1.10", "v1.9", "v1-9"],
  accents_and_case: ["a", "A", "á", "Á", "à", "ä", "å", "ab", "Ab", "aB", "áb", "áa", "ae", "AE", "æ", "Æ", "az", "b", "ss", "SS", "ß", "st", "o", "ö", "ø", "oz", "oe", "œ", "e", "é", "É", "E", "ez", "f", "a\u0301", "n", "ñ", "nz", "i", "ı", "iz", "d", "ð", "đ", "dz"],
  spaces: ["a b", "a\u00a0b", "A b", "ab", "a\tb", "a_b", "a-b", " a", "\ta", "\u00a0a", "a"],
  names: [".env", ".gitignore", "_private", "-dash", "~tilde", "§para", "README.md", "readme.txt", "Readme", "résumé.pdf", "resume.pdf", "Resume.pdf", "naïve", "über", "uber", "Uber", "zebra", "Zürich", "åland", "øre", "ñu", "nu", "Cargo.toml", "cargo.lock", "src", "Src", "µs", "mu", "€uro", "$dollar", "#hash", "@at", "(paren)", "[bracket]", "{brace}", "+plus", "=eq", "a.b", "a_b", "a-b", "a b", "ab"],
  model_ids: ["claude-3-5-sonnet", "claude-3.5-sonnet", "claude-opus-4", "Claude-Opus-4", "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4", "gpt-5", "o1", "o3-mini", "o3", "gemini-2.5-pro", "Gemini 2.5", "gemini_2", "llama3:8b", "llama3/8b", "mistral-large", "Mistral-Large", "qwen2.5-coder", "qwen-2.5", "anthropic", "openai", "OpenAI", "openrouter", "google", "x-ai", "xai", "zai", "z.ai"],
};
// The `ls` tool compares lowercased names.
groups.ls_names = uniq(groups.names.map((s) => s.toLowerCase()));

// Sort, then group neighbours Node calls equal.
const out = [];
out.push("const NODE_ORDER: &[(&str, &[&[&str]])] = &[");
for (const [name, items] of Object.entries(groups)) {
  const sorted = [...items].sort(cmp);
  const tied = [];
  for (const s of sorted) {
    if (tied.length && cmp(tied[tied.length - 1][0], s) === 0) tied[tied.length - 1].push(s);
    else tied.push([s]);
  }
  const lit = (s) =>
    JSON.stringify(s).replace(/[\u0080-\u00a0\u0300-\u036f]/g, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
  out.push(`    (\n        "${name}",\n        &[`);
  for (const t of tied) out.push(`            &[${t.map(lit).join(", ")}],`);
  out.push("        ],\n    ),");
}
out.push("];");
console.log(out.join("\n"));
