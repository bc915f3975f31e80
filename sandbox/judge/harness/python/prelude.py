from typing import *
import collections, heapq, bisect, itertools, functools, math, re, string, operator, random, sys
from collections import *
from heapq import *
from bisect import *
from itertools import *
from functools import *
from math import *
from builtins import *
sys.setrecursionlimit(100000)
