// Cross-check of the scripted server's token estimate (request bytes / 4)
// with a real tokenizer (OpenAI's o200k_base, as used by gpt-4o), on the
// request bodies `go run ./bench/llmbench -runs 1 -dump DIR` writes.
// Optional, not part of make bench (it needs an npm package):
//   mkdir -p /tmp/tok && cd /tmp/tok && npm install gpt-tokenizer@4.0.0
//   cp bench/llmbench/o200k.mjs /tmp/tok/ && node /tmp/tok/o200k.mjs DIR
// It prints, per host,
// scenario and mode, bytes/4 and o200k tokens of the whole body, and the
// adaptive/react ratios by both counts.
import { encode } from 'gpt-tokenizer/encoding/o200k_base'
import fs from 'fs'

const dir = process.argv[2]
const sums = {}
for (const f of fs.readdirSync(dir).sort()) {
  const m = f.match(/^(\w+)-([\w-]+)-(adaptive|react)-\d+\.json$/)
  if (!m) continue
  const body = fs.readFileSync(dir + '/' + f, 'utf8')
  const k = m[1] + ' ' + m[2] + ' ' + m[3]
  sums[k] = sums[k] || { bytes4: 0, o200k: 0 }
  sums[k].bytes4 += Math.max(1, Math.floor((Buffer.byteLength(body) + 3) / 4))
  sums[k].o200k += encode(body).length
}
const tot = {}
for (const k of Object.keys(sums).sort()) {
  const [h, s, mode] = k.split(' ')
  console.log(k.padEnd(30), 'bytes/4', String(sums[k].bytes4).padStart(6), 'o200k', String(sums[k].o200k).padStart(6))
  for (const key of [h + ' ' + mode, h + ' ' + s + ' ' + mode]) {
    tot[key] = tot[key] || { bytes4: 0, o200k: 0 }
    tot[key].bytes4 += sums[k].bytes4
    tot[key].o200k += sums[k].o200k
  }
}
const pct = (a, b) => (100 * a / b).toFixed(1) + '%'
for (const k of Object.keys(tot).filter(k => k.endsWith(' adaptive')).sort()) {
  const a = tot[k], r = tot[k.replace(/ adaptive$/, ' react')]
  console.log(('ratio ' + k.replace(/ adaptive$/, '')).padEnd(30), 'bytes/4', pct(a.bytes4, r.bytes4), 'o200k', pct(a.o200k, r.o200k))
}
