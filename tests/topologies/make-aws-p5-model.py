#!/usr/bin/env python3
"""Writes p5-48xlarge-8xh100-32efa-synthetic.xml: a MODEL of an AWS EC2
p5.48xlarge node, built from public data (not an export of a real machine).

    python3 tests/topologies/make-aws-p5-model.py > tests/topologies/p5-48xlarge-8xh100-32efa-synthetic.xml

Needs lstopo-no-graphics (hwloc 2.x) for the CPU part. Sources:

* AWS EC2 instance types (aws.amazon.com/ec2/instance-types/p5): 8 NVIDIA
  H100 80 GB, 192 vCPUs (2 AMD EPYC 7R13 "Milan", 48 cores each, SMT2),
  2 TiB of memory, 3200 Gbps of EFA networking on 32 network cards.
* aws/aws-ofi-nccl, topology/p5.48xl-topo.xml at commit 8807ce1e (the NCCL
  topology file the plugin ships for p5.48xlarge): "4 groups of PCIe
  hierarchy under each socket. Each group has 1 GPUs and 4 NIC behind a
  PCIe switch"; the switches' bus ids (45, 56, 67, 78 on socket 0; 89, 9a,
  ab, bc on socket 1) and the NICs' (4f-52, 60-63, 71-74, 82-85, 93-96,
  a4-a7, b5-b8, c6-c9). Its later version (commit 79565c0e) names the
  adapters rdmap79s0 ... rdmap201s0: "rdmap<bus in decimal>s0", the efa
  driver's names.
* The EFA is a verbs device on an Ethernet-class (0200) Amazon function
  (1d0f), without a network interface when attached EFA-only, as in
  g4dn-metal-8xt4.xml (a real export); H100 SXM5 is 10de:2330 behind a
  Broadcom PEX890xx Gen5 switch (1000:c030), as in
  xe8640-4xh100-spr8480-snc4.xml (a real export).

This model's own choices (not from those sources): the GPUs' bus ids (the
first free bus after each switch's NICs: 53, 64, 75, 86, 97, a8, b9, ca),
the EFA device id 1d0f:efa1, one ENA Ethernet interface (eth0, the primary
network interface, 1d0f:ec20) behind the first switch, NPS1 (one NUMA node
per socket, 1 TiB each), six 32 MiB L3s of 8 cores per socket (Milan's
CCDs), Linux PU numbering (cores 0-47 and 48-95, SMT siblings +96) and
NUMA distances 10/32.
"""
import subprocess
import sys
import xml.etree.ElementTree as ET

SWITCHES = [[0x45, 0x56, 0x67, 0x78], [0x89, 0x9A, 0xAB, 0xBC]]
PU_INDEXES = ",".join("%d,%d" % (c, c + 96) for c in range(96))
SYNTHETIC = ("pack:2 [numa(memory=1099511627776)] l3:6(size=33554432) l2:8(size=524288) "
             "l1d:1(size=32768) l1i:1(size=32768) core:1 pu:2(indexes=%s)" % PU_INDEXES)

gp = [100000]


def obj(parent, typ, **attrs):
    gp[0] += 1
    e = ET.SubElement(parent, "object", {"type": typ, "gp_index": str(gp[0])})
    for k, v in attrs.items():
        e.set(k, v)
    return e


def info(parent, name, value):
    ET.SubElement(parent, "info", {"name": name, "value": value})


def bridge(parent, depth, lo, hi, busid=None, kind="1-1"):
    attrs = {"bridge_type": kind, "depth": str(depth), "bridge_pci": "0000:[%02x-%02x]" % (lo, hi)}
    if busid:
        attrs.update(pci_busid=busid, pci_type="0604 [1000:c030] [1000:a064] b0",
                     pci_link_speed="63.015385")
    return obj(parent, "Bridge", **attrs)


def port(parent, bus, n):
    """Downstream port n of the switch whose upstream port is parent, on the
    switch's internal bus (the upstream port's secondary bus), to bus."""
    internal = int(parent.get("bridge_pci")[6:8], 16)
    return bridge(parent, 2, bus, bus, "0000:%02x:%02x.0" % (internal, n))


def efa(parent, bus, n):
    p = port(parent, bus, n)
    dev = obj(p, "PCIDev", pci_busid="0000:%02x:00.0" % bus,
              pci_type="0200 [1d0f:efa1] [1d0f:efa1] 00", pci_link_speed="31.507692")
    info(dev, "PCIVendor", "Amazon.com, Inc.")
    info(dev, "PCIDevice", "Elastic Fabric Adapter (EFA)")
    os = obj(dev, "OSDev", name="rdmap%ds0" % bus, osdev_type="3")
    info(os, "NodeGUID", "0000:0000:0000:%04x" % bus)
    info(os, "Port1State", "4")
    info(os, "Port1LID", "0x0")


def gpu(parent, bus, n, index):
    dev = obj(port(parent, bus, n), "PCIDev", pci_busid="0000:%02x:00.0" % bus,
              pci_type="0302 [10de:2330] [10de:16c1] a1", pci_link_speed="63.015385")
    info(dev, "PCIVendor", "NVIDIA Corporation")
    info(dev, "PCIDevice", "GH100 [H100 SXM5 80GB]")
    c = obj(dev, "OSDev", name="cuda%d" % index, subtype="CUDA", osdev_type="5")
    info(c, "Backend", "CUDA")
    info(c, "GPUVendor", "NVIDIA Corporation")
    info(c, "GPUModel", "NVIDIA H100 80GB HBM3")
    n = obj(dev, "OSDev", name="nvml%d" % index, subtype="NVML", osdev_type="1")
    info(n, "Backend", "NVML")
    info(n, "GPUModel", "NVIDIA H100 80GB HBM3")


def ena(parent, bus, n):
    dev = obj(port(parent, bus, n), "PCIDev", pci_busid="0000:%02x:00.0" % bus,
              pci_type="0200 [1d0f:ec20] [1d0f:ec20] 00", pci_link_speed="15.753846")
    info(dev, "PCIVendor", "Amazon.com, Inc.")
    info(dev, "PCIDevice", "Elastic Network Adapter (ENA)")
    os = obj(dev, "OSDev", name="eth0", osdev_type="2")
    info(os, "Address", "02:00:00:00:00:01")


def switch_group(package, sw, gpu_index):
    host = bridge(package, 0, sw, sw + 0x10, kind="0-1")
    up = bridge(host, 1, sw + 1, sw + 0x10, "0000:%02x:00.0" % sw)
    for k in range(4):
        efa(up, sw + 0x0A + k, k)
    gpu(up, sw + 0x0E, 4, gpu_index)
    if gpu_index == 0:
        ena(up, sw + 0x0F, 5)


def main():
    cpu = subprocess.run(["lstopo-no-graphics", "--input", SYNTHETIC, "--of", "xml", "-"],
                         check=True, capture_output=True, text=True).stdout
    root = ET.fromstring(cpu)
    machine = root.find("object")
    for i in machine.findall("info"):
        if i.get("name") == "SyntheticDescription":
            i.set("value", "AWS p5.48xlarge node MODEL (synthetic from public data, "
                  "tests/topologies/make-aws-p5-model.py): " + SYNTHETIC)
        if i.get("name") == "ProcessName":
            i.set("value", "make-aws-p5-model.py")
    packages = machine.findall("object[@type='Package']")
    for s, package in enumerate(packages):
        # hwloc reads an object's infos before its children.
        for k, (name, value) in enumerate([("CPUVendor", "AuthenticAMD"),
                                           ("CPUModel", "AMD EPYC 7R13 Processor")]):
            package.insert(k, ET.Element("info", {"name": name, "value": value}))
        for k, sw in enumerate(SWITCHES[s]):
            switch_group(package, sw, 4 * s + k)
    dist = ET.SubElement(root, "distances2", {"type": "NUMANode", "nbobjs": "2", "kind": "5",
                                              "name": "NUMALatency", "indexing": "os"})
    ET.SubElement(dist, "indexes", {"length": "3"}).text = "0 1"
    ET.SubElement(dist, "u64values", {"length": "11"}).text = "10 32 32 10"
    ET.indent(root, space="  ")
    sys.stdout.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                     '<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n')
    sys.stdout.write(ET.tostring(root, encoding="unicode") + "\n")


main()
