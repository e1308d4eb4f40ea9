#!/usr/bin/perl
# gen_deep_dwarf.pl DEPTH [block|topblock]: assembly for a shared object
# (tests/44) whose DWARF nests
# DEPTH namespaces around one function (with "block", DEPTH namespaces
# around a lexical block inside the function).
my ($depth, $mode) = @ARGV;
print <<"H";
	.text
	.globl deepfn
	.type deepfn, \@function
deepfn:
	.cfi_startproc
	nop
	nop
	ret
	.cfi_endproc
.Lend:
	.size deepfn, .-deepfn
	.section .debug_abbrev,"",\@progbits
	.uleb128 1
	.uleb128 0x11
	.byte 1
	.uleb128 0x11
	.uleb128 0x1
	.uleb128 0x12
	.uleb128 0x1
	.byte 0,0
	.uleb128 2
	.uleb128 0x39
	.byte 1
	.byte 0,0
	.uleb128 3
	.uleb128 0x2e
	.byte 1
	.uleb128 0x3
	.uleb128 0x8
	.uleb128 0x11
	.uleb128 0x1
	.uleb128 0x12
	.uleb128 0x1
	.byte 0,0
	.uleb128 4
	.uleb128 0x0b
	.byte 0
	.uleb128 0x11
	.uleb128 0x1
	.uleb128 0x12
	.uleb128 0x1
	.byte 0,0
	.byte 0
	.section .debug_info,"",\@progbits
	.long .Linfo_end - .Linfo_start
.Linfo_start:
	.value 4
	.long 0
	.byte 8
	.uleb128 1
	.quad deepfn
	.quad .Lend
H
if ($mode eq 'topblock') {
	print "\t.uleb128 2\n" x $depth;
	print "\t.uleb128 4\n\t.quad deepfn\n\t.quad .Lend\n";
	print "\t.byte 0\n" x $depth;
} elsif ($mode eq 'block') {
	print "\t.uleb128 3\n\t.string \"deepfn\"\n\t.quad deepfn\n\t.quad .Lend\n";
	print "\t.uleb128 2\n" x $depth;
	print "\t.uleb128 4\n\t.quad deepfn\n\t.quad .Lend\n";
	print "\t.byte 0\n" x $depth;
	print "\t.byte 0\n";    # end of subprogram's children
} else {
	print "\t.uleb128 2\n" x $depth;
	print "\t.uleb128 3\n\t.string \"deepfn\"\n\t.quad deepfn\n\t.quad .Lend\n\t.byte 0\n";
	print "\t.byte 0\n" x $depth;
}
print "\t.byte 0\n.Linfo_end:\n";
