'use strict';
// What a native binary was built for, read from its own headers: the file
// format (ELF, Mach-O, PE), the machine, and for ELF the shared libraries it
// names (DT_NEEDED), which tell glibc from musl. Plain reads of the header
// fields, so the tests need no toolchain to check a binary of any platform.

const fs = require('node:fs');

const ELF_MACHINES = { 0x3e: 'x86_64', 0xb7: 'aarch64' };
const MACHO_CPUS = { 0x01000007: 'x86_64', 0x0100000c: 'aarch64' };
const PE_MACHINES = { 0x8664: 'x86_64', 0xaa64: 'aarch64' };

/** { format: 'elf' | 'macho' | 'pe' | 'unknown', machine, needed? } */
function describeBinary(file) {
  const b = fs.readFileSync(file);
  if (b.length >= 64 && b.readUInt32BE(0) === 0x7f454c46) return describeElf(b);
  if (b.length >= 32 && b.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = b.readUInt32LE(4);
    return { format: 'macho', machine: MACHO_CPUS[cpu] || `cputype 0x${cpu.toString(16)}` };
  }
  if (b.length >= 64 && b.toString('latin1', 0, 2) === 'MZ') {
    const pe = b.readUInt32LE(0x3c);
    if (pe + 6 <= b.length && b.readUInt32BE(pe) === 0x50450000) {
      const m = b.readUInt16LE(pe + 4);
      return { format: 'pe', machine: PE_MACHINES[m] || `machine 0x${m.toString(16)}` };
    }
  }
  return { format: 'unknown', machine: null };
}

// 64-bit little-endian ELF only: every ELF target published is one.
function describeElf(b) {
  const machine = b.readUInt16LE(0x12);
  const out = { format: 'elf', machine: ELF_MACHINES[machine] || `e_machine 0x${machine.toString(16)}`, needed: null };
  if (b[4] !== 2 || b[5] !== 1) return { ...out, machine: `ELF class ${b[4]} data ${b[5]} (not 64-bit LE)` };
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  const phnum = b.readUInt16LE(0x38);
  const loads = [];
  let dynamic = null;
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    const type = b.readUInt32LE(at);
    const seg = { offset: Number(b.readBigUInt64LE(at + 8)), vaddr: Number(b.readBigUInt64LE(at + 16)), filesz: Number(b.readBigUInt64LE(at + 32)) };
    if (type === 1) loads.push(seg);
    if (type === 2) dynamic = seg;
  }
  if (!dynamic) return { ...out, needed: [] };
  const fileOffset = (vaddr) => {
    const seg = loads.find((s) => vaddr >= s.vaddr && vaddr < s.vaddr + s.filesz);
    if (!seg) throw new Error(`ELF address 0x${vaddr.toString(16)} is in no loaded segment`);
    return seg.offset + (vaddr - seg.vaddr);
  };
  let strtab = null;
  const neededOffsets = [];
  for (let at = dynamic.offset; at + 16 <= dynamic.offset + dynamic.filesz; at += 16) {
    const tag = Number(b.readBigInt64LE(at));
    const value = Number(b.readBigUInt64LE(at + 8));
    if (tag === 0) break;
    if (tag === 1) neededOffsets.push(value);
    if (tag === 5) strtab = fileOffset(value);
  }
  const cString = (at) => b.toString('latin1', at, b.indexOf(0, at));
  out.needed = strtab === null ? [] : neededOffsets.map((o) => cString(strtab + o));
  return out;
}

/** 'glibc' | 'musl' | null, from the libc an ELF binary links against. */
function elfLibc(needed) {
  if (!needed) return null;
  if (needed.includes('libc.so.6')) return 'glibc';
  if (needed.some((n) => n === 'libc.so' || /^libc\.musl-/.test(n))) return 'musl';
  return null;
}

module.exports = { describeBinary, elfLibc };
