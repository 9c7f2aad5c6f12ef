# WebSearch flow-size distribution: BYTES CUMULATIVE_PROBABILITY
# Source: the web-search workload measured in M. Alizadeh et al., "Data
# Center TCP (DCTCP)", ACM SIGCOMM 2010, in the tabulated form widely used
# since (e.g. the WebSearch_distribution.txt of the HPCC/ns-3 simulator).
# Sizes are flow sizes in bytes; flowgen interpolates linearly between points.
0 0
10000 0.15
20000 0.2
30000 0.3
50000 0.4
80000 0.53
200000 0.6
1000000 0.7
2000000 0.8
5000000 0.9
10000000 0.97
30000000 1
